package dev.idemkit.adapters.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.StoreUnavailableException;
import java.io.IOException;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * Writes that pass the completion script's check and still fail on the server: here an ACL user that may do
 * everything on the test's keys except {@code HINCRBY}. The first write of a unit refused -> nothing written,
 * retryable; a later one -> the earlier writes stay, the key is marked and never run again.
 */
class RedisAclFailuresIT {
    private static final Fingerprint BODY = Fingerprint.of("body");
    private static RedisTestServer redis;
    private static String user;
    private static RedissonClient restricted;
    private static RedisInboxStore store;

    @BeforeAll
    static void restrictedUser() throws IOException {
        redis = RedisTestServer.start("acl");
        user = "idemkit-it-" + UUID.randomUUID().toString().substring(0, 8);
        String password = UUID.randomUUID().toString();
        assertThat(command("ACL", "SETUSER", user, "on", ">" + password, "~" + redis.prefix() + ":*", "allchannels",
                "+@all", "-hincrby")).isEqualTo("+OK");
        Config config = new Config();
        config.setCodec(StringCodec.INSTANCE);
        config.useSingleServer().setAddress(redis.settings.addresses().get(0)).setUsername(user).setPassword(password);
        restricted = Redisson.create(config);
        store = new RedisInboxStore(restricted, redis.settings);
    }

    @AfterAll
    static void cleanUp() throws IOException {
        try {
            if (restricted != null) {
                restricted.shutdown();
            }
            command("ACL", "DELUSER", user);
        } finally {
            redis.close();
        }
    }

    private static String command(String... args) throws IOException {
        return RawRedis.command(redis.settings, args);
    }

    private static InboxKey freshKey() {
        return InboxKey.of("consumer-" + UUID.randomUUID(), "m-1");
    }

    @Test
    void aUnitWhoseFirstWriteIsRefusedWritesNothingAndCanBeRetried() {
        String hash = redis.prefix() + ":hash-" + UUID.randomUUID();
        Effect<RedisUnitOfWork, Void> denied = work -> {
            work.hincrBy(hash, "f", 1);
            return null;
        };
        for (boolean staged : new boolean[] {false, true}) {
            InboxKey key = freshKey();
            assertThatThrownBy(() -> {
                if (staged) {
                    store.runOnceStaged(key, BODY, denied);
                } else {
                    store.runOnce(key, BODY, denied);
                }
            }).isInstanceOf(StoreUnavailableException.class).hasMessageContaining("refused the first write")
                    .hasMessageContaining("can't run this command").hasMessageContaining("nothing was written");
            assertThat(redis.get(store.layout().inbox(key))).as("claim released, key not completed").isNull();
        }
        assertThat(redis.client.getKeys().countExists(hash)).isZero();
    }

    @Test
    void aUnitFailingHalfWayKeepsItsEarlierWritesAndItsKeyIsNeverRunAgain() {
        String counter = redis.prefix() + ":counter-" + UUID.randomUUID();
        String hash = redis.prefix() + ":hash-" + UUID.randomUUID();
        Effect<RedisUnitOfWork, Void> halfDenied = work -> {
            work.incrBy(counter, 1).hincrBy(hash, "f", 1);
            return null;
        };
        InboxKey key = freshKey();

        assertThatThrownBy(() -> store.runOnce(key, BODY, halfDenied)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("HINCRBY on " + hash).hasMessageContaining("failed on the server")
                .hasMessageContaining("can't run this command");

        assertThat(redis.get(counter)).as("the write before the failure").isEqualTo("1");
        assertThat(redis.get(store.layout().inbox(key))).isEqualTo("X:" + BODY.hex());
        assertThat(redis.pttl(store.layout().inbox(key))).as("the mark has no TTL").isEqualTo(-1L);
        assertThatThrownBy(() -> store.runOnce(key, BODY, halfDenied)).hasMessageContaining("partially applied");
        assertThatThrownBy(() -> store.runOnceStaged(key, BODY, halfDenied)).hasMessageContaining("partially applied");
        assertThat(redis.get(counter)).as("never applied twice").isEqualTo("1");
    }
}
