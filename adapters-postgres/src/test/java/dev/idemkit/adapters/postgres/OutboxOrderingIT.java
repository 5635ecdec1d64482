package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.out.OutboxRow;
import dev.idemkit.ports.out.RelayOutcome;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Per-key order of the outbox under concurrency, as a property over random schedules: 16 producer threads commit (or
 * roll back) transactions that append to a few shared ordering keys, pausing at random between appends and before
 * their commit, while two relays hand rows out in small batches. Whatever the interleaving, per key the rows reach
 * the publisher in seq order (which is commit order), each committed row exactly once, no rolled-back row ever, and
 * each producer's rows in the order it committed them.
 *
 * <p>Each transaction appends to its keys in key order (as {@code Outbox.appendAll} does): in opposite orders two
 * transactions can deadlock on the keys' locks, and PostgreSQL aborts one.
 *
 * <p>A row appended without the ordering key's lock (seq drawn before an earlier transaction of that key committed)
 * breaks it: the relay sees the later row committed and the earlier one not yet, and hands out the later first.
 */
class OutboxOrderingIT {
    private static final int PRODUCERS = 16;
    private static TestDatabase pg;
    private static PostgresOutbox outbox;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start(PRODUCERS + 6);
        outbox = new PostgresOutbox(pg.db());
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    /**
     * Per key, hand-out order = commit order, each committed row once, no rolled-back row. Each example is a real
     * concurrent run against PostgreSQL (about half a second), so 20 examples run here rather than 1000; the schedules
     * vary widely within each (16 threads, random pauses), and each example's seed is printed on failure.
     */
    @Test
    void perKeyOrderIsCommitOrderWhateverTheInterleaving() {
        qt().withExamples(20).withShrinkCycles(0).forAll(longs().all()).checkAssert(OutboxOrderingIT::runSchedule);
    }

    private record Committed(String id, String key, int producer, int index) {}

    private static void runSchedule(long seed) {
        pg.execute("DELETE FROM outbox_messages");
        Random plan = new Random(seed);
        int keys = 1 + plan.nextInt(4);
        List<Committed> committed = Collections.synchronizedList(new ArrayList<>());
        List<String> rolledBack = Collections.synchronizedList(new ArrayList<>());
        List<OutboxRow> handedOut = Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean producing = new AtomicBoolean(true);
        ExecutorService pool = Executors.newFixedThreadPool(PRODUCERS + 2);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> producers = new ArrayList<>();
            for (int p = 0; p < PRODUCERS; p++) {
                long producerSeed = plan.nextLong();
                int producer = p;
                producers.add(pool.submit(() -> {
                    go.await();
                    produce(producer, new Random(producerSeed), keys, committed, rolledBack);
                    return null;
                }));
            }
            List<Future<?>> relays = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                Random jitter = new Random(plan.nextLong());
                relays.add(pool.submit(() -> {
                    PostgresOutboxStore store = new PostgresOutboxStore(pg.db());
                    int idle = 0;
                    while (producing.get() || idle < 3) {
                        int n = store.relay(1 + jitter.nextInt(4), Instant.now(), runs -> {
                            Map<String, RelayOutcome> out = new HashMap<>();
                            for (List<OutboxRow> run : runs) {
                                for (OutboxRow row : run) {
                                    handedOut.add(row);
                                    out.put(row.id(), new RelayOutcome.Sent(Instant.now()));
                                }
                            }
                            pause(jitter, 2);
                            return out;
                        });
                        idle = n == 0 && !producing.get() ? idle + 1 : 0;
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : producers) {
                f.get(60, TimeUnit.SECONDS);
            }
            producing.set(false);
            for (Future<?> f : relays) {
                f.get(60, TimeUnit.SECONDS);
            }
        } catch (Exception e) {
            throw new IllegalStateException("schedule " + seed + " did not complete", e);
        } finally {
            pool.shutdownNow();
        }

        List<String> handedIds = handedOut.stream().map(OutboxRow::id).toList();
        assertThat(handedIds).as("seed %d: every committed row exactly once", seed)
                .doesNotHaveDuplicates()
                .containsExactlyInAnyOrderElementsOf(committed.stream().map(Committed::id).toList());
        // (a schedule may roll nothing back; AssertJ refuses an empty list to look for)
        assertThat(handedIds).as("seed %d: no rolled-back row", seed).noneMatch(Set.copyOf(rolledBack)::contains);
        Map<String, Long> lastSeq = new HashMap<>();
        for (OutboxRow row : handedOut) {
            Long before = lastSeq.put(row.message().orderingKey(), row.seq());
            assertThat(before == null || before < row.seq())
                    .as("seed %d: key %s handed out seq %d after seq %d", seed, row.message().orderingKey(), row.seq(), before)
                    .isTrue();
        }
        Map<String, Committed> byId = new HashMap<>();
        committed.forEach(c -> byId.put(c.id(), c));
        Map<String, Integer> lastIndex = new HashMap<>();
        for (OutboxRow row : handedOut) {
            Committed c = byId.get(row.id());
            Integer before = lastIndex.put(c.key() + "/" + c.producer(), c.index());
            assertThat(before == null || before < c.index())
                    .as("seed %d: producer %d's rows of key %s out of its commit order", seed, c.producer(), c.key())
                    .isTrue();
        }
    }

    /** A few transactions, each appending 1-3 rows to random keys (in key order) with pauses; one in eight rolls back. */
    private static void produce(int producer, Random random, int keys, List<Committed> committed, List<String> rolledBack)
            throws Exception {
        int index = 0;
        try (Connection c = pg.connection()) {
            for (int t = 0, n = 2 + random.nextInt(4); t < n; t++) {
                List<Committed> mine = new ArrayList<>();
                List<String> txKeys = new ArrayList<>();
                for (int a = 0, m = 1 + random.nextInt(3); a < m; a++) {
                    txKeys.add("key-" + random.nextInt(keys));
                }
                Collections.sort(txKeys); // key order: see Outbox's javadoc on several keys in one unit of work
                for (String key : txKeys) {
                    int i = index++;
                    String id = outbox.append(c, OutboxMessage.of("it.ordering", key,
                            (producer + ":" + i).getBytes(StandardCharsets.UTF_8)));
                    mine.add(new Committed(id, key, producer, i));
                    pause(random, 3);
                }
                if (random.nextInt(8) == 0) {
                    c.rollback();
                    mine.forEach(x -> rolledBack.add(x.id()));
                } else {
                    c.commit();
                    committed.addAll(mine);
                }
            }
        }
    }

    private static void pause(Random random, int maxMillis) {
        try {
            Thread.sleep(random.nextInt(maxMillis + 1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
