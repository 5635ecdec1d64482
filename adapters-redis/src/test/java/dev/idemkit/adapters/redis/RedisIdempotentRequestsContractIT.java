package dev.idemkit.adapters.redis;

import dev.idemkit.ports.contract.LeasedRequestsContract;
import dev.idemkit.ports.out.IdempotencyRecords;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The one Idempotency-Key flow on Redis: leased claims over {@link RedisIdempotencyRecords}. */
class RedisIdempotentRequestsContractIT extends LeasedRequestsContract {
    private static RedisTestServer redis;
    private static RedisIdempotencyRecords records;

    @BeforeAll
    static void connect() {
        redis = RedisTestServer.start("requests-contract");
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
