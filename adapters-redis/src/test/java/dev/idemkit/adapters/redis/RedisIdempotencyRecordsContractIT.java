package dev.idemkit.adapters.redis;

import dev.idemkit.ports.contract.IdempotencyRecordsContract;
import dev.idemkit.ports.out.IdempotencyRecords;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The Idempotency-Key record contract, unchanged, against Redis. */
class RedisIdempotencyRecordsContractIT extends IdempotencyRecordsContract {
    private static RedisTestServer redis;
    private static RedisIdempotencyRecords records;

    @BeforeAll
    static void connect() {
        redis = RedisTestServer.start("records-contract");
        records = new RedisIdempotencyRecords(redis.client, redis.settings);
    }

    @AfterAll
    static void cleanUp() {
        redis.close();
    }

    @Override
    protected IdempotencyRecords records() {
        return records;
    }
}
