package dev.idemkit.adapters.redis;

import dev.idemkit.ports.contract.IdempotentRequestsContract;
import dev.idemkit.ports.out.IdempotencyClaims;
import dev.idemkit.ports.service.LeasedClaims;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The one Idempotency-Key flow on Redis with the effect staged in the claim's {@link RedisUnitOfWork}: the effect (an
 * INCRBY of a counter per tag) is applied by the script that stores the response, so it commits and is dropped with the
 * key — a 5xx or an exception keeps nothing — while the claim itself is leased and so visible while the effect runs.
 */
class RedisStagedRequestsContractIT extends IdempotentRequestsContract<RedisUnitOfWork> {
    private static RedisTestServer redis;
    private static IdempotencyClaims<RedisUnitOfWork> claims;

    @BeforeAll
    static void connect() {
        redis = RedisTestServer.start("staged-requests");
        claims = LeasedClaims.staged(new RedisIdempotencyRecords(redis.client, redis.settings));
    }

    @AfterAll
    static void cleanUp() {
        redis.close();
    }

    @Override
    protected IdempotencyClaims<RedisUnitOfWork> claims() {
        return claims;
    }

    @Override
    protected void recordEffect(RedisUnitOfWork work, String tag) {
        work.incrBy(counter(tag), 1);
    }

    @Override
    protected long keptEffects(String tag) {
        String v = redis.get(counter(tag));
        return v == null ? 0 : Long.parseLong(v);
    }

    @Override
    protected boolean effectSharesTheClaimsTransaction() {
        return true;
    }

    @Override
    protected boolean claimVisibleWhileTheEffectRuns() {
        return true;
    }

    private static String counter(String tag) {
        return redis.prefix() + ":effects:" + tag;
    }
}
