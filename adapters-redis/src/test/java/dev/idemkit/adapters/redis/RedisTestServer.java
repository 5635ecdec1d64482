package dev.idemkit.adapters.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/** A client on the test server (IDEMKIT_REDIS_URL, default localhost) with a unique key prefix, deleted at close. */
final class RedisTestServer implements AutoCloseable {
    final RedisSettings settings;
    final RedissonClient client;

    private RedisTestServer(RedisSettings settings) {
        this.settings = settings;
        this.client = RedisClients.create(settings);
    }

    /** Settings from the environment with a fresh prefix {@code it-<name>-<random>}. */
    static RedisTestServer start(String name) {
        String prefix = "it-" + name + "-" + UUID.randomUUID().toString().substring(0, 8);
        return new RedisTestServer(RedisSettings.fromEnvironment().withKeyPrefix(prefix));
    }

    static RedisTestServer start(String name, RedisSettings overrides) {
        String prefix = "it-" + name + "-" + UUID.randomUUID().toString().substring(0, 8);
        return new RedisTestServer(overrides.withKeyPrefix(prefix));
    }

    String prefix() {
        return settings.keyPrefix();
    }

    /** Every key under this server's prefix. */
    List<String> keys() {
        List<String> keys = new ArrayList<>();
        client.getKeys().getKeysByPattern(prefix() + ":*", 1000).forEach(keys::add);
        return keys;
    }

    String get(String key) {
        return client.<String>getBucket(key, StringCodec.INSTANCE).get();
    }

    long pttl(String key) {
        return client.getBucket(key, StringCodec.INSTANCE).remainTimeToLive();
    }

    @Override
    public void close() {
        try {
            client.getKeys().deleteByPattern(prefix() + ":*");
        } finally {
            client.shutdown();
        }
    }
}
