package dev.idemkit.adapters.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.InvalidKeyException;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.domain.inbox.InboxKey;
import java.nio.charset.StandardCharsets;
import dev.idemkit.ports.out.IdempotencyRecords;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Invalid keys never reach Redis, and no crafted client id or key reaches another client's records. */
class RedisBadInputIT {
    private static final List<String> INVALID = List.of("", " ", "has space", "line\nbreak", "tab\t", "ação",
            "x".repeat(256), "nul\u0000");
    private static final Duration LEASE = Duration.ofSeconds(60);
    private static RedisTestServer redis;
    private static RedisInboxStore inbox;
    private static RedisIdempotencyRecords records;

    @BeforeAll
    static void connect() {
        redis = RedisTestServer.start("bad-input");
        inbox = new RedisInboxStore(redis.client, redis.settings);
        records = new RedisIdempotencyRecords(redis.client, redis.settings);
    }

    @AfterAll
    static void cleanUp() {
        redis.close();
    }

    @Test
    void invalidKeysAreRejectedBeforeAnyCommandReachesRedis() {
        Set<String> before = new HashSet<>(redis.keys());
        AtomicInteger effects = new AtomicInteger();
        for (String bad : INVALID) {
            assertThatThrownBy(() -> inbox.runOnce(InboxKey.of("consumer", bad), Fingerprint.of("b"), work -> {
                effects.incrementAndGet();
                return null;
            })).as("message id %s", bad).isInstanceOf(InvalidKeyException.class);
            assertThatThrownBy(() -> inbox.recorded(InboxKey.of(bad, "m-1"))).isInstanceOf(InvalidKeyException.class);
            assertThatThrownBy(() -> records.tryBegin(ScopedKey.of("client", bad), Fingerprint.of("r"), "f-1", LEASE))
                    .as("idempotency key %s", bad).isInstanceOf(InvalidKeyException.class);
            assertThatThrownBy(() -> records.find(ScopedKey.of(bad, "key"))).isInstanceOf(InvalidKeyException.class);
        }
        assertThatThrownBy(() -> inbox.runOnce(null, Fingerprint.of("b"), work -> null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> inbox.runOnce(InboxKey.of("c", "m"), null, work -> null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> records.tryBegin(null, Fingerprint.of("r"), "f-1", LEASE)).isInstanceOf(NullPointerException.class);
        assertThat(effects).hasValue(0);
        assertThat(new HashSet<>(redis.keys())).as("keys under the prefix").isEqualTo(before);
    }

    @Test
    void effectStagingAnInvalidKeyNameWritesNothingAndLeavesNoClaim() {
        Set<String> before = new HashSet<>(redis.keys());
        InboxKey key = InboxKey.of("consumer", "m-invalid-staging");
        assertThatThrownBy(() -> inbox.runOnce(key, Fingerprint.of("b"), work -> work.incrBy("bad key", 1)))
                .isInstanceOf(InvalidKeyException.class);
        assertThatThrownBy(() -> inbox.runOnce(key, Fingerprint.of("b"), work -> work.key("bad\nname")))
                .isInstanceOf(InvalidKeyException.class);
        assertThat(new HashSet<>(redis.keys())).isEqualTo(before);
    }

    @Test
    void craftedClientIdsAndKeysNeverReachAnotherClientsRecord() {
        ScopedKey alice = ScopedKey.of("alice", "order-1");
        Set<String> before = new HashSet<>(redis.keys());
        KeyRecord.InProgress mine = claim(alice, "alice's order");
        StoredResponse secret = new StoredResponse(201, Map.of("Location", "/orders/1"),
                "secret".getBytes(StandardCharsets.UTF_8));
        assertThat(records.complete(alice, mine, secret, Duration.ofHours(1))).isTrue();
        Set<String> aliceKeys = new HashSet<>(redis.keys());
        aliceKeys.removeAll(before);
        assertThat(aliceKeys).hasSize(1);
        String aliceRedisKey = aliceKeys.iterator().next();
        String b64Alice = KeyLayout.enc("alice");
        String b64Order = KeyLayout.enc("order-1");
        List<ScopedKey> crafted = List.of(ScopedKey.of("alice:order-1", "x"), ScopedKey.of("alice", "order-1:"),
                ScopedKey.of("alic", "e:order-1"), ScopedKey.of("alice}", "order-1"), ScopedKey.of("{alice", "order-1"),
                ScopedKey.of("bob", "}:{alice:order-1}"), ScopedKey.of("bob", b64Alice + "." + b64Order),
                ScopedKey.of(b64Alice, b64Order), ScopedKey.of(b64Alice + "." + b64Order, "x"),
                ScopedKey.of("bob", "order-1"), ScopedKey.of("ALICE", "order-1"), ScopedKey.of("*", "*"));
        for (ScopedKey attacker : crafted) {
            assertThat(records.find(attacker)).as("find by %s", attacker).isEmpty();
            KeyRecord.InProgress theirs = claim(attacker, "attack");
            assertThat(records.complete(attacker, theirs, new StoredResponse(200, Map.of(), new byte[0]),
                    Duration.ofMinutes(1))).isTrue();
            assertThat(records.complete(alice, theirs, new StoredResponse(200, Map.of(), new byte[0]),
                    Duration.ofMinutes(1))).as("another claim's fence completes nothing of alice's").isFalse();
        }
        assertThat(records.find(alice)).hasValueSatisfying(r ->
                assertThat(((KeyRecord.Completed) r).response()).isEqualTo(secret));
        Set<String> distinct = new HashSet<>(redis.keys());
        distinct.removeAll(before);
        assertThat(distinct).hasSize(crafted.size() + 1).contains(aliceRedisKey);
    }

    @Test
    void consumersWhoseNamesAndIdsConcatenateAlikeKeepSeparateInboxes() {
        Fingerprint body = Fingerprint.of("body");
        assertThat(inbox.runOnce(InboxKey.of("a:b", "c"), body, work -> null).outcome()).isEqualTo(Outcome.PROCESSED);
        assertThat(inbox.runOnce(InboxKey.of("a", "b:c"), body, work -> null).outcome()).isEqualTo(Outcome.PROCESSED);
        assertThat(inbox.runOnce(InboxKey.of("a}", "{b:c"), body, work -> null).outcome()).isEqualTo(Outcome.PROCESSED);
        assertThat(inbox.recorded(InboxKey.of("a:b", "c"))).contains(body);
        assertThat(inbox.recorded(InboxKey.of("a", "b"))).isEmpty();
    }

    private static KeyRecord.InProgress claim(ScopedKey key, String request) {
        IdempotencyRecords.Begin begun = records.tryBegin(key, Fingerprint.of(request), "f-" + UUID.randomUUID(), LEASE);
        assertThat(begun).as("claim by %s", key).isInstanceOf(IdempotencyRecords.Begin.Claimed.class);
        return ((IdempotencyRecords.Begin.Claimed) begun).claim();
    }
}
