package dev.idemkit.adapters.postgres;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Writers during a retention purge of 1,000,000 keys (issue 32 item 3, NOT part of {@code mvn verify}): the shipped
 * inbox paths ({@code PostgresInboxStore.runOnce}, one message per transaction at 4 threads, and {@code runBatch}, 100
 * per transaction at 2 threads, each with a one-row credit) run while {@link PostgresRetention#purge} works off a
 * million expired keys in the same table, and, in the same run, for as long again with nothing purged. Per repetition:
 * the million keys are inserted and vacuumed, the writers run alone for the time the purge took last (10 s the first
 * time, 30 s at most), then beside the purge with the default policy (1000 per batch, working at most a tenth of the time), then
 * beside a purge that never pauses; the table is vacuumed between windows. Prints msgs/s per window and the ratio to the window without a purge.
 * Run (see the root README):
 * {@code ./mvnw -q -B -pl benchmarks compile exec:java -Dexec.mainClass=dev.idemkit.adapters.postgres.RetentionBenchmark}
 * Options: {@code bench.keys} (expired keys per purge, default 1000000), {@code bench.reps} (default 3),
 * {@code bench.modes} ({@code single,batched}).
 */
public final class RetentionBenchmark {
    private static final long KEYS = Long.getLong("bench.keys", 1_000_000L);
    private static final int REPS = Integer.getInteger("bench.reps", 3);
    private static final List<String> MODES = List.of(System.getProperty("bench.modes", "single,batched").split(","));
    /** The longest window without a purge: rates over 30 s are steady here. */
    private static final Duration LONGEST_ALONE = Duration.ofSeconds(30);
    private static final int ACCOUNTS = 65_536;
    private static final Fingerprint FP = Fingerprint.of("credit 1");

    private final TestDatabase pg;
    private final PostgresInboxStore inbox;
    private final PostgresRetention retention;
    private final AtomicLong seq = new AtomicLong();

    private RetentionBenchmark(TestDatabase pg) {
        this.pg = pg;
        this.inbox = new PostgresInboxStore(pg.db());
        this.retention = new PostgresRetention(pg.db());
    }

    /** A writer path: one call handles this many messages. */
    @FunctionalInterface
    private interface Writer {
        int write(String consumer) throws Exception;
    }

    public static void main(String[] args) throws Exception {
        long started = System.nanoTime();
        try (TestDatabase pg = TestDatabase.start(12)) {
            new RetentionBenchmark(pg).run();
        }
        System.out.printf(Locale.ROOT, "total benchmark time %.0f s%n", (System.nanoTime() - started) / 1e9);
    }

    private void run() throws Exception {
        pg.execute("INSERT INTO accounts (id, balance) SELECT 'acc-' || g, 0 FROM generate_series(0, " + (ACCOUNTS - 1)
                + ") g");
        System.out.printf(Locale.ROOT, "retention benchmark: %,d expired keys per purge, %d repetitions, PostgreSQL %s%n",
                KEYS, REPS, pg.queryLong("SELECT current_setting('server_version_num')::bigint"));
        // warm-up: JIT and the table's first pages, not measured
        window("warm-up", this::single, 4, Duration.ofSeconds(3), null);
        List<String> rows = new ArrayList<>();
        for (String mode : MODES) {
            Writer w = mode.equals("single") ? this::single : this::batched;
            int threads = mode.equals("single") ? 4 : 2;
            Duration last = Duration.ofSeconds(10);
            for (int rep = 1; rep <= REPS; rep++) {
                seedExpired();
                Result alone = window(mode + " alone", w, threads, last, null);
                seedVacuum();
                Result paced = window(mode + " + purge (default)", w, threads, null, PostgresRetention.Policy.defaults());
                last = paced.took.compareTo(LONGEST_ALONE) > 0 ? LONGEST_ALONE : paced.took;
                seedExpired();
                Result unpaced = window(mode + " + purge (no pause)", w, threads, null,
                        PostgresRetention.Policy.defaults().withPause(Duration.ZERO).withDutyCycle(1));
                seedVacuum();
                rows.add(String.format(Locale.ROOT, "| %s, %d threads | %d | %,.0f | %,.0f (%.2fx), purge %.1f s | %,.0f"
                        + " (%.2fx), purge %.1f s |", mode, threads, rep, alone.rate, paced.rate, paced.rate / alone.rate,
                        paced.took.toMillis() / 1e3, unpaced.rate, unpaced.rate / alone.rate,
                        unpaced.took.toMillis() / 1e3));
            }
        }
        System.out.println();
        System.out.println("| writers | rep | alone msg/s | beside the default purge | beside a purge without pause |");
        System.out.println("|---|---|---|---|---|");
        rows.forEach(System.out::println);
    }

    private record Result(double rate, Duration took) {}

    /**
     * The writers for {@code duration}, or, with a {@code purge} policy, for as long as a purge of the expired keys
     * takes; their rate over that time.
     */
    private Result window(String name, Writer writer, int threads, Duration duration, PostgresRetention.Policy purge)
            throws Exception {
        String consumer = "bench-" + UUID.randomUUID();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong handled = new AtomicLong();
        List<Thread> workers = new ArrayList<>();
        List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        handled.addAndGet(writer.write(consumer));
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "writer-" + t);
            th.start();
            workers.add(th);
        }
        Thread.sleep(500); // the writers at their pace before the window opens
        long before = handled.get();
        long start = System.nanoTime();
        long deleted = 0;
        if (purge == null) {
            Thread.sleep(duration.toMillis());
        } else {
            PostgresRetention.Report r = retention.purge(purge, () -> true);
            deleted = r.processedMessages();
            if (deleted != KEYS) {
                throw new IllegalStateException("the purge deleted " + deleted + " keys, expected " + KEYS);
            }
        }
        long took = System.nanoTime() - start;
        long n = handled.get() - before;
        stop.set(true);
        for (Thread th : workers) {
            th.join(60_000);
        }
        if (!errors.isEmpty()) {
            throw new IllegalStateException("a writer failed", errors.get(0));
        }
        double rate = n / (took / 1e9);
        System.out.printf(Locale.ROOT, "%-34s threads=%d %,10.0f msgs/s over %.1f s%s%n", name, threads, rate,
                took / 1e9, purge == null ? "" : String.format(Locale.ROOT, ", %,d keys purged", deleted));
        return new Result(rate, Duration.ofNanos(took));
    }

    private void seedExpired() {
        pg.execute("INSERT INTO processed_messages (consumer, message_id, fingerprint, processed_at) SELECT 'expired',"
                + " 'm-' || g || '-' || " + seq.incrementAndGet() + ", '" + FP.hex() + "', now() - interval '30 days'"
                + " - g * interval '1 millisecond' FROM generate_series(1, " + KEYS + ") g");
        seedVacuum();
    }

    /** VACUUM runs outside a transaction: on a connection of its own in autocommit. */
    private void seedVacuum() {
        try (java.sql.Connection c = pg.connection(); java.sql.Statement s = c.createStatement()) {
            c.setAutoCommit(true);
            s.execute("VACUUM ANALYZE processed_messages");
            s.execute("VACUUM ANALYZE accounts");
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private int single(String consumer) {
        long n = seq.incrementAndGet();
        inbox.runOnce(InboxKey.of(consumer, "m-" + n), FP, w -> credit(w.connection(), n));
        return 1;
    }

    private int batched(String consumer) {
        long n = seq.incrementAndGet();
        List<InboxDelivery> deliveries = new ArrayList<>(100);
        for (int i = 0; i < 100; i++) {
            deliveries.add(new InboxDelivery(InboxKey.of(consumer, "m-" + n + "-" + i), FP));
        }
        inbox.runBatch(deliveries, (work, fresh) -> {
            TreeMap<String, Long> perAccount = new TreeMap<>(); // account order: concurrent batches do not deadlock
            for (InboxDelivery d : fresh) {
                perAccount.merge("acc-" + Math.floorMod(d.key().messageId().value().hashCode(), ACCOUNTS), 1L, Long::sum);
            }
            try (PreparedStatement ps = work.connection().prepareStatement(InboxBenchmark.EFFECT)) {
                for (var e : perAccount.entrySet()) {
                    ps.setLong(1, e.getValue());
                    ps.setString(2, e.getKey());
                    ps.addBatch();
                }
                ps.executeBatch();
            }
        });
        return 100;
    }

    private static int credit(java.sql.Connection c, long n) throws java.sql.SQLException {
        try (PreparedStatement ps = c.prepareStatement(InboxBenchmark.EFFECT)) {
            ps.setLong(1, 1);
            ps.setString(2, "acc-" + (n % ACCOUNTS));
            return ps.executeUpdate();
        }
    }
}
