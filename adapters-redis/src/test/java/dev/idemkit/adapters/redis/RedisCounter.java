package dev.idemkit.adapters.redis;

import dev.idemkit.ports.contract.EffectCounter;

/** Counters kept in Redis and written through the unit of work (INCRBY staged with the key's completion). */
final class RedisCounter implements EffectCounter<RedisUnitOfWork> {
    private final RedisTestServer redis;

    RedisCounter(RedisTestServer redis) {
        this.redis = redis;
    }

    String keyOf(String name) {
        return redis.prefix() + ":counter:" + name;
    }

    @Override
    public void add(RedisUnitOfWork work, String name, long amount) {
        work.incrBy(keyOf(name), amount);
    }

    @Override
    public long read(String name) {
        String v = redis.get(keyOf(name));
        return v == null ? 0 : Long.parseLong(v);
    }
}
