package dev.idemkit.adapters.redis;

import dev.idemkit.ports.contract.IdempotencyRecordsContract;
import dev.idemkit.ports.out.IdempotencyRecords;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The Idempotency-Key record contract, unchanged, against a real three-master Redis Cluster. */
class RedisClusterRecordsContractIT extends IdempotencyRecordsContract {
    private static LocalRedisCluster.WithClient session;
    private static RedisIdempotencyRecords records;

    @BeforeAll
    static void startCluster() throws Exception {
        session = LocalRedisCluster.WithClient.start("cluster-records");
        records = new RedisIdempotencyRecords(session.redis().client, session.redis().settings);
    }

    @AfterAll
    static void stopCluster() {
        LocalRedisCluster.WithClient.close(session);
    }

    @Override
    protected IdempotencyRecords records() {
        return records;
    }
}
