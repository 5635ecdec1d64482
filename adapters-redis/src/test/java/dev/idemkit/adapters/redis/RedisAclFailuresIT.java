package dev.idemkit.adapters.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.StoreUnavailableException;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.out.IdempotencyRecords.Begin;
import java.io.IOException;
import java.time.Duration;
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

    @Test
    void anIdempotencyKeysUnitFailingHalfWayIsNeverRenewedReleasedOrRunAgain() {
        RedisIdempotencyRecords records = new RedisIdempotencyRecords(restricted, redis.settings);
        ScopedKey key = ScopedKey.of("client-" + UUID.randomUUID(), "pay-1");
        String counter = redis.prefix() + ":counter-" + UUID.randomUUID();
        String hash = redis.prefix() + ":hash-" + UUID.randomUUID();
        KeyRecord.InProgress claim = ((Begin.Claimed) records.tryBegin(key, BODY, UUID.randomUUID().toString(),
                Duration.ofSeconds(30))).claim();
        RedisUnitOfWork work = records.open(key);
        work.incrBy(counter, 1).hincrBy(hash, "f", 1);

        assertThatThrownBy(() -> records.complete(key, claim, work, CREATED, Duration.ofMinutes(5)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("applied only in part")
                .hasMessageContaining("HINCRBY " + hash);

        assertThat(redis.get(counter)).as("the write before the failure").isEqualTo("1");
        String record = recordKey(key);
        assertThat(redis.client.getKeys().remainTimeToLive(record)).as("no TTL: it never lapses").isEqualTo(-1L);
        // a renewal already in flight, or a resent one, must not give it a lease again (it would lapse and run again)
        assertThat(records.renew(key, claim, Duration.ofMillis(200))).isFalse();
        assertThat(redis.client.getKeys().remainTimeToLive(record)).isEqualTo(-1L);
        records.release(key, claim);
        assertThat(records.find(key)).hasValueSatisfying(r -> assertThat(r).isInstanceOf(KeyRecord.InProgress.class));
        assertThat(records.tryBegin(key, BODY, UUID.randomUUID().toString(), Duration.ofSeconds(30)))
                .as("a retry").isInstanceOf(Begin.Held.class);
        assertThat(records.complete(key, claim, records.open(key), CREATED, Duration.ofMinutes(5)))
                .as("a resent completion").isFalse();
        assertThat(redis.get(counter)).as("never applied twice").isEqualTo("1");
    }

    @Test
    void anIdempotencyKeysUnitWhoseFirstWriteIsRefusedIsAStoreFailureAndFreesTheKey() {
        RedisIdempotencyRecords records = new RedisIdempotencyRecords(restricted, redis.settings);
        ScopedKey key = ScopedKey.of("client-" + UUID.randomUUID(), "pay-2");
        String hash = redis.prefix() + ":hash-" + UUID.randomUUID();
        KeyRecord.InProgress claim = ((Begin.Claimed) records.tryBegin(key, BODY, UUID.randomUUID().toString(),
                Duration.ofSeconds(30))).claim();
        RedisUnitOfWork work = records.open(key);
        work.hincrBy(hash, "f", 1);

        assertThatThrownBy(() -> records.complete(key, claim, work, CREATED, Duration.ofMinutes(5)))
                .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("nothing was written")
                .hasMessageNotContaining("lapses after its lease");
        assertThat(records.find(key)).as("the key is free for a retry").isEmpty();
        assertThat(redis.client.getKeys().countExists(hash)).isZero();
    }

    private static final StoredResponse CREATED = new StoredResponse(201, java.util.Map.of(),
            "{}".getBytes(java.nio.charset.StandardCharsets.UTF_8));

    private static String recordKey(ScopedKey key) {
        return new KeyLayout(redis.settings.keyPrefix(), redis.settings.hashTagScope()).record(key);
    }
}
