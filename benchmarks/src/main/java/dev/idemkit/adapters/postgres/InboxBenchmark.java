package dev.idemkit.adapters.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The inbox benchmark of issue 3 (NOT part of {@code mvn verify}): at 1, 4 and 16 threads, against the
 * same database in the same run, (1) the effect alone through the same stack, (2) a hand-written JDBC
 * baseline of the same SQL, (3) the idemkit inbox + effect, (4) idemkit batched (100 per
 * transaction), (5) duplicates only, (6) (3) again with many keys preloaded. Prints msgs/s and the
 * ratio to (2) at the same thread count. Run (see README):
 * {@code ./mvnw -q -pl adapters-postgres test-compile exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=dev.idemkit.adapters.postgres.InboxBenchmark}
 * Options (system properties): {@code bench.seconds} (per measurement, default 3), {@code
 * bench.preload} (keys preloaded for case 6, default 1000000), {@code bench.accounts} (accounts the
 * effect spreads over, default 65536).
 */
public final class InboxBenchmark {
    private static final int ACCOUNTS = Integer.getInteger("bench.accounts", 65_536);
    private static final int BATCH = 100;
    private static final int[] THREADS = {1, 4, 16};
    static final String EFFECT = "UPDATE accounts SET balance = balance + ? WHERE id = ?";
    private static final Fingerprint FP = Fingerprint.of("credit 1");

    /** One operation of a case on one thread; returns how many messages it handled. */
    @FunctionalInterface
    interface Op {
        int run(String consumer, long n) throws Exception;
    }

    private final TestDatabase pg;
    private final HikariDataSource jdbc;
    private final PostgresInboxStore inbox;
    private final double seconds = Double.parseDouble(System.getProperty("bench.seconds", "3"));
    private final AtomicLong seq = new AtomicLong();

    private InboxBenchmark(TestDatabase pg) {
        this.pg = pg;
        this.inbox = new PostgresInboxStore(pg.db());
        this.jdbc = PostgresDatabase.createPool(PostgresSettings.fromEnvironment().withSchema(pg.schema()).withPoolSize(18));
    }

    public static void main(String[] args) throws Exception {
        long started = System.nanoTime();
        try (TestDatabase pg = TestDatabase.start(18)) {
            InboxBenchmark b = new InboxBenchmark(pg);
            try {
                b.run();
            } finally {
                b.jdbc.close();
            }
        }
        System.out.printf(Locale.ROOT, "total benchmark time %.0f s%n", (System.nanoTime() - started) / 1e9);
    }

    private void run() throws Exception {
        pg.execute("INSERT INTO accounts (id, balance) SELECT 'acc-' || g, 0 FROM generate_series(0, " + (ACCOUNTS - 1) + ") g");
        Map<String, Op> cases = new LinkedHashMap<>();
        cases.put("1 effect alone (same stack)", (c, n) -> pg.db().inTransaction(w -> credit(w.connection(), n)));
        cases.put("2 JDBC baseline", this::jdbcBaseline);
        cases.put("3 idemkit inbox + effect", (c, n) -> {
            inbox.runOnce(InboxKey.of(c, "m-" + n), FP, w -> credit(w.connection(), n));
            return 1;
        });
        cases.put("4 idemkit batched (100/tx)", this::batch);
        Map<String, double[]> rates = new LinkedHashMap<>();
        for (var e : cases.entrySet()) {
            rates.put(e.getKey(), measureAll(e.getKey(), e.getValue()));
        }
        rates.put("5 duplicates only", duplicates());
        long preload = Long.getLong("bench.preload", 1_000_000L);
        long t0 = System.nanoTime();
        pg.execute("INSERT INTO processed_messages (consumer, message_id, fingerprint) SELECT 'preloaded', 'm-' || g, '"
                + FP.hex() + "' FROM generate_series(1, " + preload + ") g");
        pg.execute("ANALYZE processed_messages");
        System.out.printf(Locale.ROOT, "preloaded %,d keys in %.1f s%n", preload, (System.nanoTime() - t0) / 1e9);
        rates.put("6 = 3 with " + preload / 1000 + "k keys preloaded", measureAll("6", cases.get("3 idemkit inbox + effect")));
        print(rates);
    }

    private int credit(Connection c, long n) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(EFFECT)) {
            ps.setLong(1, 1);
            ps.setString(2, "acc-" + (n % ACCOUNTS));
            return ps.executeUpdate();
        }
    }

    private int jdbcBaseline(String consumer, long n) throws SQLException {
        try (Connection c = jdbc.getConnection()) {
            try (PreparedStatement ps = c.prepareStatement(PostgresInboxStore.INSERT_KEY)) {
                ps.setString(1, consumer);
                ps.setString(2, "m-" + n);
                ps.setString(3, FP.hex());
                if (ps.executeUpdate() == 1) {
                    credit(c, n);
                }
            }
            c.commit();
        }
        return 1;
    }

    private int batch(String consumer, long n) {
        List<InboxDelivery> deliveries = new ArrayList<>(BATCH);
        for (int i = 0; i < BATCH; i++) {
            deliveries.add(new InboxDelivery(InboxKey.of(consumer, "m-" + n + "-" + i), FP));
        }
        inbox.runBatch(deliveries, (work, fresh) -> {
            // the effects as ONE JDBC batch, accounts in id order so that concurrent batches lock rows in the
            // same order (a set-based UPDATE ... FROM unnest(...) joins in any order and deadlocks here)
            TreeMap<String, Long> perAccount = new TreeMap<>();
            for (InboxDelivery d : fresh) {
                perAccount.merge("acc-" + Math.floorMod(d.key().messageId().value().hashCode(), ACCOUNTS), 1L, Long::sum);
            }
            try (PreparedStatement ps = work.connection().prepareStatement(EFFECT)) {
                for (var e : perAccount.entrySet()) {
                    ps.setLong(1, e.getValue());
                    ps.setString(2, e.getKey());
                    ps.addBatch();
                }
                ps.executeBatch();
            }
        });
        return BATCH;
    }

    private double[] duplicates() throws Exception {
        String consumer = "dups";
        int keys = 20_000;
        pg.execute("INSERT INTO processed_messages (consumer, message_id, fingerprint) SELECT '" + consumer
                + "', 'm-' || g, '" + FP.hex() + "' FROM generate_series(0, " + (keys - 1) + ") g");
        return measureAll("5", (c, n) -> {
            inbox.runOnce(InboxKey.of(consumer, "m-" + (n % keys)), FP, w -> credit(w.connection(), n));
            return 1;
        });
    }

    private double[] measureAll(String name, Op op) throws Exception {
        double[] r = new double[THREADS.length];
        for (int i = 0; i < THREADS.length; i++) {
            measure(op, THREADS[i], 0.5); // warm-up
            r[i] = measure(op, THREADS[i], seconds);
            System.out.printf(Locale.ROOT, "%-34s threads=%2d %,10.0f msgs/s%n", name, THREADS[i], r[i]);
        }
        return r;
    }

    private double measure(Op op, int threads, double secs) throws Exception {
        String consumer = "bench-" + UUID.randomUUID();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong handled = new AtomicLong();
        CountDownLatch done = new CountDownLatch(threads);
        List<Throwable> errors = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        handled.addAndGet(op.run(consumer, seq.incrementAndGet()));
                    }
                } catch (Throwable e) {
                    synchronized (errors) {
                        errors.add(e);
                    }
                } finally {
                    done.countDown();
                }
            });
            th.start();
        }
        long start = System.nanoTime();
        Thread.sleep((long) (secs * 1000));
        stop.set(true);
        long before = handled.get();
        double elapsed = (System.nanoTime() - start) / 1e9;
        done.await(60, TimeUnit.SECONDS);
        if (!errors.isEmpty()) {
            throw new IllegalStateException("benchmark thread failed", errors.get(0));
        }
        return before / elapsed;
    }

    private static void print(Map<String, double[]> rates) {
        double[] base = rates.get("2 JDBC baseline");
        double[] single = rates.get("3 idemkit inbox + effect");
        System.out.println();
        System.out.println("| case | 1 thread | 4 threads | 16 threads |");
        System.out.println("|---|---|---|---|");
        for (var e : rates.entrySet()) {
            StringBuilder row = new StringBuilder("| " + e.getKey() + " |");
            for (int i = 0; i < THREADS.length; i++) {
                row.append(String.format(Locale.ROOT, " %,.0f/s (%.2f x JDBC, %.2f x inbox) |", e.getValue()[i],
                        e.getValue()[i] / base[i], e.getValue()[i] / single[i]));
            }
            System.out.println(row);
        }
    }

}
