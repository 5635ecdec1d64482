package dev.idemkit.adapters.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.Inbox;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The one-round-trip inbox for effects staged in Redis ({@code runOnceStaged}, {@code runEachOnceStaged}) and
 * batches bigger than one script call, on a real Redis.
 */
class RedisStagedInboxIT {
    private static final Fingerprint BODY = Fingerprint.of("body");
    private static RedisTestServer redis;
    private static RedisCounter counter;

    @BeforeAll
    static void connect() {
        redis = RedisTestServer.start("staged");
        counter = new RedisCounter(redis);
    }

    @AfterAll
    static void cleanUp() {
        redis.close();
    }

    private static RedisInboxStore store(Duration claimWait) {
        return new RedisInboxStore(redis.client, redis.settings.withLeaseTtl(Duration.ofSeconds(30))
                .withRetentionTtl(Duration.ofHours(1)).withClaimWait(claimWait));
    }

    private static Outcome addOneStaged(RedisInboxStore store, InboxKey key, Fingerprint body, String name) {
        return store.runOnceStaged(key, body, work -> {
            counter.add(work, name, 1);
            return null;
        }).outcome();
    }

    @Test
    void newKeyAppliesTheStagedWritesAndCompletesTheKeyInOneStep() {
        RedisInboxStore store = store(Duration.ZERO);
        InboxKey key = InboxKey.of("consumer-" + UUID.randomUUID(), "m-1");
        String name = "c-" + UUID.randomUUID();

        assertThat(store.runOnceStaged(key, BODY, work -> {
            counter.add(work, name, 5);
            return "value";
        }).value()).contains("value");

        assertThat(counter.read(name)).isEqualTo(5);
        assertThat(redis.get(store.layout().inbox(key))).isEqualTo("C:" + BODY.hex());
        assertThat(redis.pttl(store.layout().inbox(key))).isBetween(3_500_000L, 3_600_000L);
        assertThat(store.recorded(key)).contains(BODY);
    }

    @Test
    void duplicateDropsTheStagedWritesAndAReusedIdIsRejected() {
        RedisInboxStore store = store(Duration.ZERO);
        InboxKey key = InboxKey.of("consumer-" + UUID.randomUUID(), "m-1");
        String name = "c-" + UUID.randomUUID();
        assertThat(addOneStaged(store, key, BODY, name)).isEqualTo(Outcome.PROCESSED);

        assertThat(addOneStaged(store, key, BODY, name)).isEqualTo(Outcome.DUPLICATE);
        assertThat(addOneStaged(store, key, Fingerprint.of("another body"), name))
                .isEqualTo(Outcome.rejected(Inbox.REUSED_ID));
        assertThat(store.runOnce(key, BODY, work -> {
            counter.add(work, name, 1);
            return null;
        }).outcome()).as("the two-step path sees the same key").isEqualTo(Outcome.DUPLICATE);
        assertThat(counter.read(name)).isEqualTo(1);
    }

    @Test
    void keyHeldByATwoStepDeliveryIsWaitedForAndThenADuplicate() throws Exception {
        RedisInboxStore store = store(Duration.ofSeconds(5));
        InboxKey key = InboxKey.of("consumer-" + UUID.randomUUID(), "m-1");
        String name = "c-" + UUID.randomUUID();
        String redisKey = store.layout().inbox(key);
        String holder = InboxAnswers.claimValue(BODY);
        assertThat(store.claim(key, redisKey, holder, BODY)).isEmpty();
        assertThatThrownBy(() -> addOneStaged(store(Duration.ZERO), key, BODY, name))
                .isInstanceOf(ClaimHeldException.class);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<Outcome> waiting = pool.submit(() -> addOneStaged(store, key, BODY, name));
            await().pollDelay(Duration.ofMillis(300)).until(() -> true);
            assertThat(waiting).as("a live claim is not a duplicate yet").isNotDone();
            store.complete(key, redisKey, holder, BODY,
                    List.of(new RedisUnitOfWork.Staged("INCRBY", counter.keyOf(name), "7", "")));
            assertThat(waiting.get(5, TimeUnit.SECONDS)).isEqualTo(Outcome.DUPLICATE);
        } finally {
            pool.shutdownNow();
        }
        assertThat(counter.read(name)).isEqualTo(7);
    }

    @Test
    void stagedWriteThatCannotApplyWritesNothingNotEvenTheKey() {
        RedisInboxStore store = store(Duration.ZERO);
        InboxKey key = InboxKey.of("consumer-" + UUID.randomUUID(), "m-1");
        String name = "c-" + UUID.randomUUID();
        String text = redis.prefix() + ":text-" + UUID.randomUUID();
        redis.client.getBucket(text, org.redisson.client.codec.StringCodec.INSTANCE).set("not a number");

        assertThatThrownBy(() -> store.runOnceStaged(key, BODY, work -> {
            counter.add(work, name, 5);
            work.incrBy(text, 1);
            return null;
        })).isInstanceOf(IllegalStateException.class).hasMessageContaining("INCRBY on " + text)
                .hasMessageContaining("NOTINT");
        assertThat(counter.read(name)).isZero();
        assertThat(redis.get(store.layout().inbox(key))).isNull();
        assertThat(addOneStaged(store, key, BODY, name)).as("a corrected retry runs").isEqualTo(Outcome.PROCESSED);
    }

    @Test
    void effectFailingOnADuplicateIsStillADuplicate() {
        RedisInboxStore store = store(Duration.ZERO);
        InboxKey key = InboxKey.of("consumer-" + UUID.randomUUID(), "m-1");
        String name = "c-" + UUID.randomUUID();
        assertThat(addOneStaged(store, key, BODY, name)).isEqualTo(Outcome.PROCESSED);

        assertThat(store.runOnceStaged(key, BODY, work -> {
            throw new IllegalStateException("insufficient funds: the first delivery already debited");
        }).outcome()).isEqualTo(Outcome.DUPLICATE);
        assertThat(counter.read(name)).isEqualTo(1);
    }

    @Test
    void failingEffectSendsNothing() {
        RedisInboxStore store = store(Duration.ZERO);
        InboxKey key = InboxKey.of("consumer-" + UUID.randomUUID(), "m-1");
        assertThatThrownBy(() -> store.runOnceStaged(key, BODY, work -> {
            throw new IllegalStateException("effect failed");
        })).hasMessage("effect failed");
        assertThat(redis.get(store.layout().inbox(key))).isNull();
    }

    @Test
    void thirtyTwoThreadsOnTheSameHundredKeysGrowTheCounterByExactlyHundred() throws Exception {
        RedisInboxStore store = store(Duration.ofMillis(200));
        String name = "c-" + UUID.randomUUID();
        int processed = HundredKeysRace.run("consumer-" + UUID.randomUUID(), key -> addOneStaged(store, key, BODY, name));
        assertThat(processed).isEqualTo(100);
        assertThat(counter.read(name)).isEqualTo(100);
    }

    @Test
    void batchBiggerThanOneScriptCallRunsEachNewKeyOnceInEitherPath() {
        RedisInboxStore store = store(Duration.ZERO);
        RedisBulkInbox bulk = new RedisBulkInbox(store);
        String consumer = "consumer-" + UUID.randomUUID();
        String name = "c-" + UUID.randomUUID();
        int size = 2 * InboxCommands.MAX_KEYS_PER_CALL + 88;
        List<InboxDelivery> first = new ArrayList<>();
        List<InboxDelivery> second = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            first.add(new InboxDelivery(InboxKey.of(consumer, "m-" + i), BODY));
            second.add(new InboxDelivery(InboxKey.of(consumer, "m-" + (i + size / 2)), BODY));
        }
        List<RedisBulkInbox.BulkResult<Integer>> a = bulk.runEachOnce(first, (d, work) -> {
            counter.add(work, name, 1);
            return 1;
        });
        List<RedisBulkInbox.BulkResult<Integer>> b = bulk.runEachOnceStaged(second, (d, work) -> {
            counter.add(work, name, 1);
            return 2;
        });

        assertThat(a).allSatisfy(r -> assertThat(r.result().orElseThrow().outcome()).isEqualTo(Outcome.PROCESSED));
        assertThat(b.subList(0, size - size / 2)).allSatisfy(r -> assertThat(r.result().orElseThrow().outcome())
                .isEqualTo(Outcome.DUPLICATE));
        assertThat(b.subList(size - size / 2, size)).allSatisfy(r -> assertThat(r.result().orElseThrow().value())
                .contains(2));
        assertThat(b.get(0).delivery()).as("results in input order").isEqualTo(second.get(0));
        assertThat(counter.read(name)).isEqualTo(size + size / 2);
    }

    @Test
    void stagedBatchDecidesEachDeliveryOnItsOwn() {
        RedisInboxStore store = store(Duration.ZERO);
        RedisBulkInbox bulk = new RedisBulkInbox(store);
        String consumer = "consumer-" + UUID.randomUUID();
        String name = "c-" + UUID.randomUUID();
        String text = redis.prefix() + ":text-" + UUID.randomUUID();
        redis.client.getBucket(text, org.redisson.client.codec.StringCodec.INSTANCE).set("not a number");
        store.runOnce(InboxKey.of(consumer, "done"), BODY, work -> null);
        InboxKey held = InboxKey.of(consumer, "held");
        assertThat(store.claim(held, store.layout().inbox(held), InboxAnswers.claimValue(BODY),
                BODY)).isEmpty();
        List<InboxDelivery> batch = List.of(
                new InboxDelivery(InboxKey.of(consumer, "new"), BODY),
                new InboxDelivery(InboxKey.of(consumer, "done"), BODY),
                new InboxDelivery(InboxKey.of(consumer, "done"), Fingerprint.of("other")),
                new InboxDelivery(held, BODY),
                new InboxDelivery(InboxKey.of(consumer, "bad"), BODY),
                new InboxDelivery(InboxKey.of(consumer, "throws"), BODY),
                new InboxDelivery(InboxKey.of(consumer, "new"), BODY));

        List<RedisBulkInbox.BulkResult<Void>> r = bulk.runEachOnceStaged(batch, (d, work) -> {
            counter.add(work, name, 1);
            switch (d.key().messageId().value()) {
                case "bad" -> work.incrBy(text, 1);
                case "throws" -> throw new IllegalArgumentException("malformed");
                case "done" -> throw new IllegalStateException("fails now that the first delivery was applied");
                default -> { }
            }
            return null;
        });

        assertThat(r.get(0).result().orElseThrow().outcome()).isEqualTo(Outcome.PROCESSED);
        assertThat(r.get(1).result().orElseThrow().outcome()).isEqualTo(Outcome.DUPLICATE);
        assertThat(r.get(2).result().orElseThrow().outcome()).isEqualTo(Outcome.rejected(Inbox.REUSED_ID));
        assertThat(r.get(3).failure()).containsInstanceOf(ClaimHeldException.class);
        assertThat(r.get(4).failure()).get().extracting(Throwable::getMessage).asString().contains("NOTINT");
        assertThat(r.get(5).failure()).get().extracting(Throwable::getMessage).isEqualTo("malformed");
        assertThat(r.get(6).result().orElseThrow().outcome()).as("the same key again in the batch")
                .isEqualTo(Outcome.DUPLICATE);
        assertThat(counter.read(name)).as("only the first 'new' applied").isEqualTo(1);
        assertThat(redis.get(store.layout().inbox(InboxKey.of(consumer, "bad")))).isNull();
        assertThat(redis.get(store.layout().inbox(InboxKey.of(consumer, "throws")))).isNull();
    }
}
