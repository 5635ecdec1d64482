package dev.idemkit.adapters.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.Guarantee;
import dev.idemkit.ports.out.StoreUnavailableException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Leases, takeover, retention, release, wrong-typed staged writes and a 32-thread race, on a real Redis. */
class RedisInboxStoreIT {
    private static final Fingerprint BODY = Fingerprint.of("body");
    private static RedisTestServer redis;
    private static RedisCounter counter;

    @BeforeAll
    static void connect() {
        redis = RedisTestServer.start("inbox");
        counter = new RedisCounter(redis);
    }

    @AfterAll
    static void cleanUp() {
        redis.close();
    }

    private static RedisInboxStore store(Duration lease, Duration retention, Duration claimWait) {
        return new RedisInboxStore(redis.client,
                redis.settings.withLeaseTtl(lease).withRetentionTtl(retention).withClaimWait(claimWait));
    }

    private static InboxKey freshKey() {
        return InboxKey.of("consumer-" + UUID.randomUUID(), "m-1");
    }

    private static Outcome addOne(RedisInboxStore store, InboxKey key, String name) {
        return store.runOnce(key, BODY, work -> {
            counter.add(work, name, 1);
            return null;
        }).outcome();
    }

    /** Claims like a delivery whose process then dies: the claim stays until its lease ends. */
    private static String claimAndCrash(RedisInboxStore store, InboxKey key) {
        String mine = InboxAnswers.claimValue(BODY);
        assertThat(store.claim(key, store.layout().inbox(key), mine, BODY)).isEmpty();
        return mine;
    }

    @Test
    void crashedHoldersClaimExpiresAfterItsLeaseAndAnotherInstanceTakesOver() {
        RedisInboxStore crashed = store(Duration.ofMillis(400), Duration.ofHours(1), Duration.ZERO);
        RedisInboxStore other = store(Duration.ofMillis(400), Duration.ofHours(1), Duration.ZERO);
        InboxKey key = freshKey();
        String name = "c-" + UUID.randomUUID();
        String stale = claimAndCrash(crashed, key);

        assertThatThrownBy(() -> addOne(other, key, name)).as("a live claim is not a duplicate")
                .isInstanceOf(ClaimHeldException.class).isInstanceOf(StoreUnavailableException.class);
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(50))
                .until(() -> redis.get(other.layout().inbox(key)) == null);
        assertThat(addOne(other, key, name)).isEqualTo(Outcome.PROCESSED);

        List<RedisUnitOfWork.Staged> late = List.of(new RedisUnitOfWork.Staged("INCRBY", counter.keyOf(name), "1", ""));
        assertThatThrownBy(() -> crashed.complete(key, crashed.layout().inbox(key), stale, BODY, late))
                .as("the crashed holder waking up late").isInstanceOf(ClaimLostException.class);
        assertThat(counter.read(name)).isEqualTo(1);
        assertThat(other.recorded(key)).contains(BODY);
    }

    @Test
    void completedKeyIsKeptForItsRetentionTtlAndNeverTakenOverBeforeIt() {
        RedisInboxStore store = store(Duration.ofMillis(100), Duration.ofMillis(1500), Duration.ZERO);
        InboxKey key = freshKey();
        String name = "c-" + UUID.randomUUID();
        assertThat(addOne(store, key, name)).isEqualTo(Outcome.PROCESSED);
        assertThat(redis.pttl(store.layout().inbox(key))).isBetween(1L, 1500L);

        await().pollDelay(Duration.ofMillis(400)).until(() -> true);
        assertThat(addOne(store, key, name)).as("past the lease, within retention").isEqualTo(Outcome.DUPLICATE);
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(50)).until(() -> store.recorded(key).isEmpty());
        assertThat(addOne(store, key, name)).as("after the dedup window").isEqualTo(Outcome.PROCESSED);
        assertThat(counter.read(name)).isEqualTo(2);
    }

    @Test
    void claimScriptSentAgainAfterItsAnswerWasLostStillHoldsTheClaim() {
        RedisInboxStore store = store(Duration.ofSeconds(30), Duration.ofHours(1), Duration.ZERO);
        InboxKey key = freshKey();
        String name = "c-" + UUID.randomUUID();
        String mine = claimAndCrash(store, key);

        assertThat(store.claim(key, store.layout().inbox(key), mine, BODY)).as("our own value is our claim").isEmpty();
        assertThatThrownBy(() -> addOne(store, key, name)).as("anyone else's value is held")
                .isInstanceOf(ClaimHeldException.class);
        store.complete(key, store.layout().inbox(key), mine, BODY, List.of());
        assertThat(store.recorded(key)).contains(BODY);
    }

    /** The claim script's branch for servers before Redis 7 (no SET NX GET), run here by hiding the version. */
    @Test
    void claimScriptGivesTheSameAnswersWithAndWithoutSetNxGet() {
        String pre7 = InboxScripts.CLAIM.replace("(redis.REDIS_VERSION_NUM or 0)", "0");
        assertThat(pre7).isNotEqualTo(InboxScripts.CLAIM);
        for (String script : List.of(InboxScripts.CLAIM, pre7)) {
            String absent = redis.prefix() + ":claim-" + UUID.randomUUID();
            String present = redis.prefix() + ":claim-" + UUID.randomUUID();
            redis.client.getBucket(present, org.redisson.client.codec.StringCodec.INSTANCE).set("C:earlier");
            List<Object> answers = redis.client.getScript(org.redisson.client.codec.StringCodec.INSTANCE).eval(absent,
                    org.redisson.api.RScript.Mode.READ_WRITE, script, org.redisson.api.RScript.ReturnType.LIST,
                    List.of(absent, present, absent), "60000", "P:a", "P:b", "P:c");
            assertThat(answers).containsExactly("", "C:earlier", "P:a");
            assertThat(redis.get(absent)).isEqualTo("P:a");
            assertThat(redis.pttl(absent)).isBetween(1L, 60_000L);
            assertThat(redis.get(present)).isEqualTo("C:earlier");
        }
    }

    @Test
    void failingEffectReleasesItsClaimAtOnceSoThatARetryRuns() {
        RedisInboxStore store = store(Duration.ofMinutes(5), Duration.ofHours(1), Duration.ZERO);
        InboxKey key = freshKey();
        String name = "c-" + UUID.randomUUID();
        assertThatThrownBy(() -> store.runOnce(key, BODY, work -> {
            counter.add(work, name, 1);
            throw new IllegalStateException("effect failed");
        })).hasMessage("effect failed");
        assertThat(redis.get(store.layout().inbox(key))).as("claim after the failure, long before its lease").isNull();
        assertThat(addOne(store, key, name)).isEqualTo(Outcome.PROCESSED);
        assertThat(counter.read(name)).isEqualTo(1);
    }

    @Test
    void deliveryWaitingOnAHeldKeyReportsADuplicateOnlyAfterTheHolderCompletes() throws Exception {
        RedisInboxStore store = store(Duration.ofSeconds(30), Duration.ofHours(1), Duration.ofSeconds(5));
        InboxKey key = freshKey();
        String name = "c-" + UUID.randomUUID();
        String holder = claimAndCrash(store, key);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<Outcome> waiting = pool.submit(() -> addOne(store, key, name));
            await().pollDelay(Duration.ofMillis(300)).until(() -> true);
            assertThat(waiting).as("still waiting while the first runs").isNotDone();
            store.complete(key, store.layout().inbox(key), holder, BODY,
                    List.of(new RedisUnitOfWork.Staged("INCRBY", counter.keyOf(name), "7", "")));
            assertThat(waiting.get(5, TimeUnit.SECONDS)).isEqualTo(Outcome.DUPLICATE);
        } finally {
            pool.shutdownNow();
        }
        assertThat(counter.read(name)).isEqualTo(7);
    }

    @Test
    void deliveryWaitingOnAHeldKeyRunsWhenTheHolderReleases() throws Exception {
        RedisInboxStore store = store(Duration.ofSeconds(30), Duration.ofHours(1), Duration.ofSeconds(5));
        InboxKey key = freshKey();
        String name = "c-" + UUID.randomUUID();
        String holder = claimAndCrash(store, key);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<Outcome> waiting = pool.submit(() -> addOne(store, key, name));
            await().pollDelay(Duration.ofMillis(200)).until(() -> true);
            store.release(key, store.layout().inbox(key), holder, new RuntimeException("holder failed"));
            assertThat(waiting.get(5, TimeUnit.SECONDS)).isEqualTo(Outcome.PROCESSED);
        } finally {
            pool.shutdownNow();
        }
        assertThat(counter.read(name)).isEqualTo(1);
    }

    @Test
    void thirtyTwoThreadsOnTheSameHundredKeysGrowTheCounterByExactlyHundred() throws Exception {
        RedisInboxStore store = store(Duration.ofSeconds(30), Duration.ofHours(1), Duration.ofMillis(200));
        String name = "c-" + UUID.randomUUID();
        int processed = HundredKeysRace.run("consumer-" + UUID.randomUUID(), key -> addOne(store, key, name));
        assertThat(processed).isEqualTo(100);
        assertThat(counter.read(name)).isEqualTo(100);
    }

    @Test
    void stagedWriteThatCannotApplyWritesNothingAndReleasesTheClaim() {
        RedisInboxStore store = store(Duration.ofSeconds(30), Duration.ofHours(1), Duration.ZERO);
        InboxKey key = freshKey();
        String name = "c-" + UUID.randomUUID();
        String hash = redis.prefix() + ":a-hash-" + UUID.randomUUID();
        redis.client.getMap(hash).put("field", "value");

        assertThatThrownBy(() -> store.runOnce(key, BODY, work -> {
            counter.add(work, name, 5);
            work.incrBy(hash, 1);
            return null;
        })).isInstanceOf(IllegalStateException.class).hasMessageContaining("INCRBY on " + hash)
                .hasMessageContaining("WRONGTYPE");
        assertThat(counter.read(name)).as("the earlier staged write").isZero();
        assertThat(redis.get(store.layout().inbox(key))).as("the claim").isNull();
    }

    @Test
    void counterThatWouldOverflowFailsTheUnitBeforeAnyWriteSoNothingIsHalfApplied() {
        RedisInboxStore store = store(Duration.ofSeconds(30), Duration.ofHours(1), Duration.ZERO);
        String name = "c-" + UUID.randomUUID();
        String big = redis.prefix() + ":big-" + UUID.randomUUID();
        redis.client.getBucket(big, org.redisson.client.codec.StringCodec.INSTANCE).set("9000000000000000000");
        InboxKey first = freshKey();
        assertThatThrownBy(() -> store.runOnce(first, BODY, work -> {
            counter.add(work, name, 5);
            work.incrBy(big, 500_000_000_000_000_000L);
            return null;
        })).isInstanceOf(IllegalStateException.class).hasMessageContaining("INCRBY on " + big)
                .hasMessageContaining("OVERFLOW");
        InboxKey second = freshKey();
        String fresh = redis.prefix() + ":fresh-" + UUID.randomUUID();
        assertThatThrownBy(() -> store.runOnce(second, BODY, work -> {
            counter.add(work, name, 5);
            work.incrBy(fresh, 5_000_000_000_000_000_000L).incrBy(fresh, 5_000_000_000_000_000_000L);
            return null;
        })).as("two increments of one unit add up").hasMessageContaining("OVERFLOW");
        assertThat(counter.read(name)).isZero();
        assertThat(redis.get(big)).isEqualTo("9000000000000000000");
        assertThat(redis.get(fresh)).isNull();
        assertThat(redis.get(store.layout().inbox(first))).isNull();
        assertThat(redis.get(store.layout().inbox(second))).isNull();
    }

    @Test
    void unitOfWorkAppliesEveryStagedCommandTogetherWithTheKey() {
        RedisInboxStore store = store(Duration.ofSeconds(30), Duration.ofHours(1), Duration.ZERO);
        InboxKey key = freshKey();
        String[] keys = new String[4];
        store.runOnce(key, BODY, work -> {
            keys[0] = work.key("balance");
            keys[1] = work.key("account");
            keys[2] = work.key("seen");
            keys[3] = work.key("last");
            work.incrBy(keys[0], 40).incrBy(keys[0], 2).hset(keys[1], "owner", "ana").hincrBy(keys[1], "n", 3)
                    .sadd(keys[2], "m-1").set(keys[3], "m-1", Duration.ofMinutes(1));
            return null;
        });
        assertThat(redis.get(keys[0])).isEqualTo("42");
        assertThat(redis.client.<String, String>getMap(keys[1], org.redisson.client.codec.StringCodec.INSTANCE)
                .readAllMap()).containsEntry("owner", "ana").containsEntry("n", "3");
        assertThat(redis.client.<String>getSet(keys[2], org.redisson.client.codec.StringCodec.INSTANCE).readAll())
                .containsExactly("m-1");
        assertThat(redis.pttl(keys[3])).isBetween(1L, 60_000L);
        assertThat(keys).allSatisfy(k -> assertThat(KeyLayout.slot(k)).isEqualTo(KeyLayout.slot(store.layout().inbox(key))));
    }

    @Test
    void guaranteesAreExactlyOnceForStagedEffectsAndDuplicatesReducedForExternalOnes() {
        RedisInboxStore store = store(Duration.ofSeconds(30), Duration.ofHours(1), Duration.ZERO);
        assertThat(store.guarantee()).isEqualTo(Guarantee.EXACTLY_ONCE_WITHIN_STORE_DURABILITY);
        assertThat(store.externalEffectGuarantee()).isEqualTo(Guarantee.DUPLICATES_REDUCED);
        assertThat(store.externalEffectGuarantee().description()).contains("not excluded");
    }
}
