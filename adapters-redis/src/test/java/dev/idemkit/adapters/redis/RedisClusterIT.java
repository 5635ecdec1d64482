package dev.idemkit.adapters.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.client.codec.StringCodec;

/**
 * The inbox on a real three-master Redis Cluster: keys of many consumers land on different nodes, so combined
 * calls and batches are cut by slot and routed to the node of each slot; effects staged in the claim's slot
 * commit with their key; a key outside that slot is refused before anything is sent.
 */
class RedisClusterIT {
    private static final Fingerprint BODY = Fingerprint.of("body");
    private static LocalRedisCluster.WithClient session;
    private static LocalRedisCluster cluster;
    private static RedisTestServer redis;
    private static RedisInboxStore store;

    @BeforeAll
    static void startCluster() throws Exception {
        session = LocalRedisCluster.WithClient.start("cluster");
        cluster = session.cluster();
        redis = session.redis();
        store = new RedisInboxStore(redis.client, redis.settings);
    }

    @AfterAll
    static void stopCluster() {
        LocalRedisCluster.WithClient.close(session);
    }

    /** The per-consumer counter an effect keeps in its claim's slot. */
    private static String counterKey(String consumer) {
        return store.layout().data(KeyLayout.hashTag(store.layout().inbox(InboxKey.of(consumer, "any"))), "count");
    }

    private static long count(String consumer) {
        String v = redis.client.<String>getBucket(counterKey(consumer), StringCodec.INSTANCE).get();
        return v == null ? 0 : Long.parseLong(v);
    }

    private static List<String> consumers(int n) {
        String run = UUID.randomUUID().toString().substring(0, 8);
        List<String> names = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            names.add("consumer-" + run + "-" + i);
        }
        return names;
    }

    @Test
    void consumersSpreadOverTheNodes() throws Exception {
        Set<Integer> nodes = new HashSet<>();
        for (String consumer : consumers(20)) {
            nodes.add(cluster.portOf(store.layout().inbox(InboxKey.of(consumer, "m"))));
        }
        assertThat(nodes).as("masters serving 20 consumers' keys").hasSizeGreaterThan(1);
    }

    @Test
    void sixteenThreadsDeliveringEveryMessageTwiceAcrossTwentyConsumersCountEachOnce() throws Exception {
        List<String> consumers = consumers(20);
        List<InboxKey> deliveries = new ArrayList<>();
        for (String consumer : consumers) {
            for (int m = 0; m < 30; m++) {
                deliveries.add(InboxKey.of(consumer, "m-" + m));
                deliveries.add(InboxKey.of(consumer, "m-" + m));
            }
        }
        Collections.shuffle(deliveries);
        AtomicInteger next = new AtomicInteger();
        AtomicInteger processed = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < 16; t++) {
            int thread = t;
            done.add(pool.submit(() -> {
                for (int i; (i = next.getAndIncrement()) < deliveries.size(); ) {
                    InboxKey key = deliveries.get(i);
                    while (true) {
                        try {
                            // half the threads take the two-step path, half the one-call path: same keys, same answers
                            Outcome outcome = HundredKeysRace.countInClaimSlot(store, key, BODY, thread % 2 == 1);
                            if (outcome == Outcome.PROCESSED) {
                                processed.incrementAndGet();
                            }
                            break;
                        } catch (ClaimHeldException busy) {
                            // redelivered later
                        }
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get(120, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertThat(processed).hasValue(20 * 30);
        assertThat(consumers).allSatisfy(c -> assertThat(count(c)).as("counter of %s", c).isEqualTo(30));
    }

    @Test
    void batchesOverManySlotsAreCutBySlotAndEachKeyDecidedOnce() {
        List<String> consumers = consumers(12);
        RedisBulkInbox bulk = new RedisBulkInbox(store);
        List<InboxDelivery> batch = new ArrayList<>();
        for (String consumer : consumers) {
            for (int m = 0; m < 25; m++) {
                batch.add(new InboxDelivery(InboxKey.of(consumer, "m-" + m), BODY));
            }
        }
        Collections.shuffle(batch);
        RedisBulkInbox.BulkEffect<Void> addOne = (d, work) -> {
            work.incrBy(work.key("count"), 1);
            return null;
        };

        List<RedisBulkInbox.BulkResult<Void>> first = bulk.runEachOnce(batch.subList(0, 200), addOne);
        List<RedisBulkInbox.BulkResult<Void>> second = bulk.runEachOnceStaged(batch, addOne);

        assertThat(first).allSatisfy(r -> assertThat(r.result().orElseThrow().outcome()).isEqualTo(Outcome.PROCESSED));
        assertThat(second.subList(0, 200)).allSatisfy(r -> assertThat(r.result().orElseThrow().outcome())
                .isEqualTo(Outcome.DUPLICATE));
        assertThat(second.subList(200, batch.size())).allSatisfy(r -> assertThat(r.result().orElseThrow().outcome())
                .isEqualTo(Outcome.PROCESSED));
        assertThat(consumers).allSatisfy(c -> assertThat(count(c)).as("counter of %s", c).isEqualTo(25));
    }

    @Test
    void aStagedKeyOutsideTheClaimsSlotIsRefusedAndNothingIsWritten() {
        InboxKey key = InboxKey.of(consumers(1).get(0), "m-1");
        String elsewhere = redis.prefix() + ":elsewhere";
        assertThatThrownBy(() -> store.runOnce(key, BODY, work -> {
            work.incrBy(elsewhere, 1);
            return null;
        })).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not in the claim's cluster slot");
        assertThat(store.recorded(key)).isEmpty();
        assertThat(redis.client.getBucket(store.layout().inbox(key)).isExists()).as("claim released").isFalse();
        assertThat(redis.client.getBucket(elsewhere).isExists()).isFalse();
    }

    @Test
    void perMessageHashTagsWorkToo() {
        RedisInboxStore perMessage = new RedisInboxStore(redis.client,
                redis.settings.withHashTagScope(RedisSettings.HashTagScope.MESSAGE));
        String consumer = consumers(1).get(0);
        List<InboxDelivery> batch = new ArrayList<>();
        for (int m = 0; m < 40; m++) {
            batch.add(new InboxDelivery(InboxKey.of(consumer, "m-" + m), BODY));
        }
        List<RedisBulkInbox.BulkResult<Void>> results = new RedisBulkInbox(perMessage).runEachOnce(batch, (d, work) -> {
            work.set(work.key("seen"), d.key().messageId().value());
            return null;
        });
        assertThat(results).allSatisfy(r -> assertThat(r.result().orElseThrow().outcome()).isEqualTo(Outcome.PROCESSED));
        for (InboxDelivery d : batch) {
            String seen = perMessage.layout().data(KeyLayout.hashTag(perMessage.layout().inbox(d.key())), "seen");
            assertThat(redis.client.<String>getBucket(seen, StringCodec.INSTANCE).get()).isEqualTo(d.key().messageId().value());
            assertThat(perMessage.runOnce(d.key(), BODY, work -> null).outcome()).isEqualTo(Outcome.DUPLICATE);
        }
    }
}
