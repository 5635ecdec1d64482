package dev.idemkit.adapters.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.out.IdempotencyRecords.Begin;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.client.codec.StringCodec;

/**
 * The staged completion of an Idempotency-Key record on the real server: the writes an effect staged are applied
 * only with the response and only while the claim's fence is there; a write that cannot apply writes nothing and
 * frees the key.
 */
class RedisStagedRecordsIT {
    private static final Fingerprint FINGERPRINT = Fingerprint.ofRequest("POST", "/payments",
            "{}".getBytes(StandardCharsets.UTF_8));
    private static final StoredResponse CREATED = new StoredResponse(201, Map.of("Content-Type", "application/json"),
            "{\"id\":1}".getBytes(StandardCharsets.UTF_8));
    private static RedisTestServer redis;
    private static RedisIdempotencyRecords records;

    @BeforeAll
    static void connect() {
        redis = RedisTestServer.start("staged-records");
        records = new RedisIdempotencyRecords(redis.client, redis.settings);
    }

    @AfterAll
    static void cleanUp() {
        redis.close();
    }

    @Test
    void aClaimThatLapsedAndWasTakenOverAppliesNothingOfItsWorkAndTheNewHoldersDoes() {
        ScopedKey key = ScopedKey.of("client-" + UUID.randomUUID(), "pay-1");
        String balance = redis.prefix() + ":balance:" + UUID.randomUUID();
        KeyRecord.InProgress first = claim(key, Duration.ofMillis(200));
        RedisUnitOfWork stalled = records.open(key);
        stalled.incrBy(balance, 500);
        Awaitility.await("the first claim's lease ran out on Redis' clock").atMost(Duration.ofSeconds(5))
                .until(() -> records.find(key).isEmpty());
        KeyRecord.InProgress second = claim(key, Duration.ofSeconds(30));
        RedisUnitOfWork taker = records.open(key);
        taker.incrBy(balance, 500);

        assertThat(records.complete(key, first, stalled, CREATED, Duration.ofMinutes(5))).as("the lapsed claim").isFalse();
        assertThat(redis.get(balance)).as("nothing of the lapsed claim's work").isNull();
        assertThat(records.complete(key, second, taker, CREATED, Duration.ofMinutes(5))).isTrue();
        assertThat(redis.get(balance)).isEqualTo("500");
        assertThat(records.find(key)).hasValueSatisfying(r -> assertThat(r).isInstanceOf(KeyRecord.Completed.class));
        assertThat(records.complete(key, second, records.open(key), CREATED, Duration.ofMinutes(5)))
                .as("a completed record is completed once").isFalse();
    }

    @Test
    void aStagedWriteThatCannotApplyWritesNothingAndFreesTheKey() {
        ScopedKey key = ScopedKey.of("client-" + UUID.randomUUID(), "pay-2");
        String hash = redis.prefix() + ":a-hash:" + UUID.randomUUID();
        String members = redis.prefix() + ":members:" + UUID.randomUUID();
        redis.client.getMap(hash, StringCodec.INSTANCE).put("f", "v");
        KeyRecord.InProgress claim = claim(key, Duration.ofSeconds(30));
        RedisUnitOfWork work = records.open(key);
        work.sadd(members, "pay_1").incrBy(hash, 1); // INCRBY on a hash: refused before any write

        assertThatThrownBy(() -> records.complete(key, claim, work, CREATED, Duration.ofMinutes(5)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("WRONGTYPE 2")
                .hasMessageContaining("nothing was written");
        assertThat(redis.client.getSet(members, StringCodec.INSTANCE).isExists()).as("the first write").isFalse();
        assertThat(records.find(key)).as("the key is free for a retry").isEmpty();
    }

    @Test
    void writesOfARequestWithoutAKeyAreAppliedTogether() {
        String a = redis.prefix() + ":no-key-a:" + UUID.randomUUID();
        String b = redis.prefix() + ":no-key-b:" + UUID.randomUUID();
        RedisUnitOfWork work = records.openWithoutKey();
        work.incrBy(a, 7).set(b, "x");
        records.apply(work);
        assertThat(redis.get(a)).isEqualTo("7");
        assertThat(redis.get(b)).isEqualTo("x");
        records.apply(work); // what Redisson's resend of a script that timed out does: the same call once more
        assertThat(redis.get(a)).as("applied once").isEqualTo("7");
    }

    private static KeyRecord.InProgress claim(ScopedKey key, Duration lease) {
        Begin begun = records.tryBegin(key, FINGERPRINT, UUID.randomUUID().toString(), lease);
        assertThat(begun).isInstanceOf(Begin.Claimed.class);
        return ((Begin.Claimed) begun).claim();
    }
}
