package dev.idemkit.adapters.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.Effect;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.client.codec.StringCodec;

/**
 * The completion script's check of staged writes, before any write, on the state the unit's own earlier writes
 * would leave; and what stays with one delivery when several share a script call.
 */
class RedisStagedWriteChecksIT {
    private static final Fingerprint BODY = Fingerprint.of("body");
    private static RedisTestServer redis;
    private static RedisInboxStore store;

    @BeforeAll
    static void connect() {
        redis = RedisTestServer.start("checks");
        store = new RedisInboxStore(redis.client, redis.settings.withClaimWait(Duration.ZERO));
    }

    @AfterAll
    static void cleanUp() {
        redis.close();
    }

    private static String key(String name) {
        return redis.prefix() + ":" + name + "-" + UUID.randomUUID();
    }

    private static InboxKey freshKey() {
        return InboxKey.of("consumer-" + UUID.randomUUID(), "m-1");
    }

    private static String get(String key) {
        return redis.get(key);
    }

    private static String hget(String key, String field) {
        return redis.client.<String, String>getMap(key, StringCodec.INSTANCE).get(field);
    }

    /** Both paths refuse the unit with a message naming the check, and nothing is written, not even the key. */
    private static void refusedWithNothingWritten(Effect<RedisUnitOfWork, Void> effect, String check, String... untouched) {
        for (boolean staged : new boolean[] {false, true}) {
            InboxKey inbox = freshKey();
            assertThatThrownBy(() -> {
                if (staged) {
                    store.runOnceStaged(inbox, BODY, effect);
                } else {
                    store.runOnce(inbox, BODY, effect);
                }
            }).as(staged ? "one-call path" : "two-step path").isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining(check).hasMessageContaining("nothing was written");
            assertThat(get(store.layout().inbox(inbox))).isNull();
        }
        for (String k : untouched) {
            assertThat(redis.client.getKeys().countExists(k)).as("key %s", k).isZero();
        }
    }

    @Test
    void anHsetThenAnHincrbyOfTheSameFieldIsCheckedOnTheValueTheHsetWrites() {
        String balance = key("balance");
        String hash = key("hash");
        refusedWithNothingWritten(work -> {
            work.incrBy(balance, 10).hset(hash, "f", "abc").hincrBy(hash, "f", 1);
            return null;
        }, "NOTINT", balance, hash);
    }

    @Test
    void anHincrbyThatWouldOverflowAfterAnHsetOfTheSameUnitIsRefused() {
        String hash = key("hash");
        refusedWithNothingWritten(work -> {
            work.hset(hash, "g", "9000000000000000000").hincrBy(hash, "g", 900_000_000_000_000_000L);
            return null;
        }, "OVERFLOW", hash);
    }

    @Test
    void countersRedisWouldNotReadAsIntegersAreRefused() {
        for (String stored : List.of("007", "-0", "00", "+5", " 5", "5 ", "1.5", "")) {
            String counter = key("counter");
            redis.client.getBucket(counter, StringCodec.INSTANCE).set(stored);
            refusedWithNothingWritten(work -> {
                work.incrBy(counter, 1);
                return null;
            }, "NOTINT");
            assertThat(get(counter)).as("counter holding '%s'", stored).isEqualTo(stored);
        }
    }

    @Test
    void writesOfOneUnitAreCheckedInTheirOrder() {
        String counters = key("counters");
        String hash = key("hash");
        redis.client.getMap(counters, StringCodec.INSTANCE).put("f", "not yet a number");
        redis.client.getMap(hash, StringCodec.INSTANCE).put("f", "x");
        InboxKey inbox = freshKey();
        assertThat(store.runOnce(inbox, BODY, work -> {
            work.hset(counters, "f", "5").hincrBy(counters, "f", 2) // HSET then HINCRBY: 7, whatever was there
                    .del(hash).set(hash, "now a string"); // DEL then a write of another type
            return null;
        }).outcome()).isEqualTo(Outcome.PROCESSED);
        assertThat(hget(counters, "f")).isEqualTo("7");
        assertThat(get(hash)).isEqualTo("now a string");
        String negative = key("negative");
        redis.client.getBucket(negative, StringCodec.INSTANCE).set("-9223372036854775");
        assertThat(store.runOnceStaged(freshKey(), BODY, work -> {
            work.incrBy(negative, -5).hincrBy(key("fresh-hash"), "n", 3);
            return null;
        }).outcome()).isEqualTo(Outcome.PROCESSED);
        assertThat(get(negative)).isEqualTo("-9223372036854780");
    }

    @Test
    void aTtlBeyondAHundredYearsIsRefusedWhenStaged() {
        InboxKey inbox = freshKey();
        assertThatThrownBy(() -> store.runOnce(inbox, BODY, work -> {
            work.set(work.key("k"), "v", Duration.ofDays(36_501));
            return null;
        })).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("36500 days");
        assertThat(get(store.layout().inbox(inbox))).as("claim released").isNull();
    }

    @Test
    void aWriteFailingOnTheServerStaysWithItsOwnDeliveryInASharedCall() {
        InboxKey first = freshKey();
        InboxKey middle = freshKey();
        InboxKey last = freshKey();
        String before = key("before");
        String badTtl = key("bad-ttl");
        String after = key("after");
        List<InboxCommands.Completion> call = List.of(
                new InboxCommands.Completion(store.layout().inbox(first), "", "C:" + BODY.hex(),
                        List.of(new RedisUnitOfWork.Staged("SET", before, "1", ""))),
                new InboxCommands.Completion(store.layout().inbox(middle), "", "C:" + BODY.hex(),
                        List.of(new RedisUnitOfWork.Staged("INCRBY", before + "-m", "1", ""),
                                // a TTL no Redis accepts, sent past RedisUnitOfWork's own check
                                new RedisUnitOfWork.Staged("SET", badTtl, "v", "99999999999999999999"))),
                new InboxCommands.Completion(store.layout().inbox(last), "", "C:" + BODY.hex(),
                        List.of(new RedisUnitOfWork.Staged("SET", after, "3", ""))));

        List<String> answers = store.commands().complete(call);

        assertThat(answers.get(0)).isEqualTo("OK");
        assertThat(answers.get(1)).startsWith("PARTIAL 2 ");
        assertThat(answers.get(2)).isEqualTo("OK");
        assertThat(get(before)).isEqualTo("1");
        assertThat(get(after)).isEqualTo("3");
        assertThat(get(before + "-m")).as("the failed unit's earlier write").isEqualTo("1");
        assertThat(get(store.layout().inbox(middle))).as("the failed unit's key, marked").isEqualTo("X:" + BODY.hex());
        assertThat(redis.pttl(store.layout().inbox(middle))).as("the mark has no TTL").isEqualTo(-1L);
        assertThat(InboxAnswers.describe(answers.get(1), call.get(1).staged(), "unused"))
                .contains("SET on " + badTtl).contains("failed on the server")
                .contains("after the unit's earlier writes were applied");
        Effect<RedisUnitOfWork, Void> again = work -> {
            work.incrBy(before + "-m", 1);
            return null;
        };
        assertThatThrownBy(() -> store.runOnce(middle, BODY, again)).hasMessageContaining("partially applied");
        assertThatThrownBy(() -> store.runOnceStaged(middle, BODY, again)).hasMessageContaining("partially applied");
        assertThat(get(before + "-m")).as("never applied twice").isEqualTo("1");
    }

    @Test
    void anInboxKeyOfAnotherTypeFailsItsOwnDeliveryOnly() {
        InboxKey good = freshKey();
        InboxKey broken = freshKey();
        redis.client.getMap(store.layout().inbox(broken), StringCodec.INSTANCE).put("not", "a claim");
        List<String> answers = store.commands().complete(List.of(
                new InboxCommands.Completion(store.layout().inbox(broken), "", "C:" + BODY.hex(), List.of()),
                new InboxCommands.Completion(store.layout().inbox(good), "", "C:" + BODY.hex(), List.of())));
        assertThat(answers.get(0)).startsWith("BADKEY WRONGTYPE");
        assertThat(answers.get(1)).isEqualTo("OK");
        assertThatThrownBy(() -> store.runOnce(broken, BODY, work -> null)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("holds a value of another type");
        assertThatThrownBy(() -> store.runOnceStaged(broken, BODY, work -> null)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("holds a value of another type");
    }

    @Test
    void anEffectCannotStageTheStoresOwnKeys() {
        InboxKey victim = freshKey();
        for (String own : List.of(store.layout().inbox(victim), redis.prefix() + ":idem:{x.y}")) {
            assertThatThrownBy(() -> store.runOnceStaged(freshKey(), BODY, work -> {
                work.set(own, "C:" + BODY.hex());
                return null;
            })).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("belongs to the inbox");
        }
        assertThat(get(store.layout().inbox(victim))).isNull();
    }
}
