package dev.idemkit.adapters.postgres;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.idemkit.adapters.rabbit.RabbitMessageTransport;
import dev.idemkit.adapters.rabbit.RabbitSettings;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.OutboxEvents;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.out.OutboxStore;
import dev.idemkit.ports.service.OutboxRelay;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import dev.idemkit.benchmarks.CpuMeter;

/**
 * The outbox benchmark (issue 16; NOT part of {@code mvn verify}), everything against the same PostgreSQL and RabbitMQ in
 * one run, through the code that ships ({@link PostgresOutbox}, {@link PostgresOutboxStore}, {@link OutboxRelay}, the
 * RabbitMQ transport):
 * <ol>
 *   <li>append overhead: the effect's transaction (a credit) with and without one outbox append, at 1 and 4 threads
 *       (target: at most 10 % fewer transactions per second);
 *   <li>relay throughput: {@code bench.rows} committed rows drained by the relay, against a raw amqp-client confirmed
 *       publish of the same messages (one channel, confirms awaited per 200) and the transport's own {@code publish}
 *       from 8 threads (target: relay at least 0.7 x raw), and a raw publish keeping one message in flight per key over
 *       64 keys (what key window 1 allows without a database); per path also the CPU per message of the broker,
 *       PostgreSQL and this JVM ({@link CpuMeter}), and how many cores were busy;
 *   <li>latency from commit to the consumer, p50 and p99, one row every 10 ms and one every 300 ms, waking on
 *       LISTEN/NOTIFY (as shipped) against polling every 100 ms (the same relay on the same store without its LISTEN).
 * </ol>
 * Run (see the top-level README): {@code ./mvnw -q -pl benchmarks exec:java
 * -Dexec.mainClass=dev.idemkit.adapters.postgres.OutboxBenchmark}. Options: {@code bench.seconds} (default 3),
 * {@code bench.rows} (default 20000), {@code bench.latencyRows} (default 500), {@code bench.cases} (which of 1, 2, 3; default all).
 */
public final class OutboxBenchmark {
    private static final int ACCOUNTS = 65_536;
    private static final double SECONDS = Double.parseDouble(System.getProperty("bench.seconds", "3"));
    private static final int ROWS = Integer.getInteger("bench.rows", 20_000);
    private static final int LATENCY_ROWS = Integer.getInteger("bench.latencyRows", 500);
    private static final String CASES = System.getProperty("bench.cases", "123");
    private static final String CREDIT = "UPDATE accounts SET balance = balance + 1 WHERE id = ?";
    private static final byte[] BODY = "{\"account_id\":\"acc-1\",\"amount\":1.00,\"currency\":\"BRL\"}"
            .getBytes(StandardCharsets.UTF_8);

    private final TestDatabase pg;
    private static final dev.idemkit.domain.Fingerprint FINGERPRINT = dev.idemkit.domain.Fingerprint.of(BODY);
    private final PostgresOutbox outbox;
    private final RelayDrain drain;
    private final PostgresInboxStore inbox;
    private final RabbitMessageTransport transport;
    private final Connection amqp;
    private final String tag = UUID.randomUUID().toString().substring(0, 8);
    private final List<String> queues = new ArrayList<>();

    private OutboxBenchmark(TestDatabase pg) throws Exception {
        this.pg = pg;
        this.outbox = new PostgresOutbox(pg.db());
        this.drain = new RelayDrain(pg.db());
        this.inbox = new PostgresInboxStore(pg.db());
        this.transport = new RabbitMessageTransport(RabbitSettings.fromEnvironment(), Clock.system(), "idemkit-bench-outbox");
        ConnectionFactory f = new ConnectionFactory();
        f.setUri(RabbitSettings.fromEnvironment().uri());
        this.amqp = f.newConnection("idemkit-bench-outbox-raw");
    }

    public static void main(String[] args) throws Exception {
        long started = System.nanoTime();
        try (TestDatabase pg = TestDatabase.start(12)) {
            OutboxBenchmark b = new OutboxBenchmark(pg);
            try {
                b.run();
            } finally {
                b.queues.forEach(q -> {
                    try {
                        b.transport.deleteTopology(q);
                    } catch (RuntimeException ignored) {
                        // best effort
                    }
                });
                b.amqp.close();
                b.transport.close();
            }
        }
        System.out.printf(Locale.ROOT, "total benchmark time %.0f s%n", (System.nanoTime() - started) / 1e9);
    }

    private void run() throws Exception {
        pg.execute("INSERT INTO accounts (id, balance) SELECT 'acc-' || g, 0 FROM generate_series(0, " + (ACCOUNTS - 1) + ") g");
        if (CASES.contains("1")) {
            appendOverhead();
        }
        if (CASES.contains("2")) {
            relayThroughput();
        }
        if (CASES.contains("3")) {
            System.out.println();
            System.out.println("== 3. commit -> consumer latency");
            System.out.println("| traffic | wake-up | p50 ms | p99 ms | max ms |");
            System.out.println("|---|---|---|---|---|");
            latency("one row every 10 ms", LATENCY_ROWS, 10, "LISTEN/NOTIFY (shipped), poll 1 s as fallback", true);
            latency("one row every 10 ms", LATENCY_ROWS, 10, "polling every 100 ms", false);
            latency("one row every 300 ms", LATENCY_ROWS / 10, 300, "LISTEN/NOTIFY (shipped), poll 1 s as fallback", true);
            latency("one row every 300 ms", LATENCY_ROWS / 10, 300, "polling every 100 ms", false);
            rawLatency(LATENCY_ROWS, 10);
            rawLatency(LATENCY_ROWS / 10, 300);
            System.out.println();
            System.out.println("Where it goes, p50 / p99 ms: commit -> the pass that takes the row begins (wake-up, or the"
                    + " pass before it ending); the pass's statements before publishing; publish -> the consumer has it");
            System.out.println("| traffic | wake-up | commit -> pass begins | pass's statements | publish -> consumer |");
            System.out.println("|---|---|---|---|---|");
            steps.forEach(System.out::println);
        }
    }

    /** How the effect's transaction appends: not at all, in idemkit's unit of work, or on its JDBC connection. */
    private enum Append { NONE, UNIT_OF_WORK, CONNECTION }

    private void appendOverhead() throws Exception {
        System.out.println("== 1. append overhead on the effect's transaction (target: <= 10 %)");
        System.out.println("| transaction | threads | without tx/s | with one append in idemkit's unit of work (shipped:"
                + " sent with the commit) tx/s | overhead | with one append(Connection) (its own round trip: a Spring"
                + " service's, and the unit of work's before) tx/s | overhead |");
        System.out.println("|---|---|---|---|---|---|---|");
        for (boolean inbox : new boolean[] {false, true}) {
            for (int threads : new int[] {1, 4}) {
                for (Append a : Append.values()) {
                    measure(inbox, a, threads, 0.5);
                }
                // the three alternate, three rounds each, medians compared: this machine drifts by tens of percent
                // between consecutive seconds (commit latency), more than the difference measured
                double[][] rates = new double[Append.values().length][ROUNDS];
                for (int r = 0; r < ROUNDS; r++) {
                    for (Append a : Append.values()) {
                        rates[a.ordinal()][r] = measure(inbox, a, threads, SECONDS / ROUNDS);
                    }
                }
                double plain = median(rates[0]);
                double unit = median(rates[1]);
                double own = median(rates[2]);
                System.out.printf(Locale.ROOT, "| %s | %d | %,.0f | %,.0f | %.1f %% %s | %,.0f | %.1f %% |%n", inbox
                        ? "a consumer's: inbox key + credit (as ConsumerRuntime runs it)" : "a one-statement effect (credit)",
                        threads, plain, unit, 100 * (1 - unit / plain), 1 - unit / plain <= 0.10 ? "(met)" : "(NOT met)",
                        own, 100 * (1 - own / plain));
            }
        }
    }

    private void relayThroughput() throws Exception {
        System.out.println();
        System.out.println("== 2. relay throughput, " + ROWS + " rows committed, then drained by the relay's loops as serve"
                + " runs them (" + settings().passes() + " passes of up to "
                + settings().batch() + " rows at once) (target: relay >= 0.7 x raw confirmed publish)");
        int threads = Integer.getInteger("bench.publishThreads", 8);
        int window = Integer.getInteger("bench.keyWindow", 8);
        // interleaved, twice, so that drift of this machine between seconds shows in the spread, not as a ratio
        rawPublish(queue("raw-warm-up")); // the client's and the broker's first run is slower (JIT, a new queue process)
        transportPublishAsync(queue("async-warm-up"), threads);
        relayDrain(queue("relay-warm-up"), ROWS, 1); // the relay's own first run too (JIT, the statements' plans)
        List<double[]> rounds = new ArrayList<>();
        List<CpuMeter.Spent[]> cpu = new ArrayList<>();
        for (int round = 0; round < 2; round++) {
            int r = round;
            List<java.util.concurrent.Callable<Double>> paths = List.of(
                    () -> rawPublish(queue("raw-" + r)),
                    () -> rawPublishPerKey(queue("raw-64-" + r), 64),
                    () -> transportPublish(queue("transport-" + r), threads),
                    () -> transportPublishAsync(queue("async-" + r), threads),
                    () -> relayDrain(queue("relay-keys-" + r), ROWS, 1),
                    () -> relayDrain(queue("relay-64-" + r), 64, 1),
                    () -> relayDrain(queue("relay-64w-" + r), 64, window));
            double[] rates = new double[paths.size()];
            CpuMeter.Spent[] spent = new CpuMeter.Spent[paths.size()];
            for (int i = 0; i < paths.size(); i++) {
                rates[i] = paths.get(i).call();
                spent[i] = lastCpu; // measured by the path itself, over what its rate counts
            }
            rounds.add(rates);
            cpu.add(spent);
        }
        String[] paths = {
            "raw amqp-client, one channel, confirms awaited per 200",
            "raw amqp-client, 64 keys, a key's next message after its confirm (no database)",
            "the transport's publish (one confirm awaited per call), " + threads + " threads",
            "the transport's publishAsync, " + threads + " threads, " + (200 / threads) + " in flight each",
            "the outbox relay as shipped, every row its own key",
            "the outbox relay as shipped, 64 keys (key window 1: a key's next row after its confirm)",
            "the outbox relay, 64 keys, key window " + window + " (opt-in: withKeyWindow)"};
        double[] targets = {0, 0, 0, 0.8, 0.5, 0.7, 0.7};
        System.out.println("| path | msg/s, run 1 / run 2 | x raw of the same round |");
        System.out.println("|---|---|---|");
        for (int i = 0; i < paths.length; i++) {
            double r1 = rounds.get(0)[i] / rounds.get(0)[0];
            double r2 = rounds.get(1)[i] / rounds.get(1)[0];
            System.out.printf(Locale.ROOT, "| %s | %,.0f / %,.0f | %.2f / %.2f %s |%n", paths[i], rounds.get(0)[i],
                    rounds.get(1)[i], r1, r2, targets[i] == 0 ? ""
                    : "(target " + targets[i] + ": " + (Math.min(r1, r2) >= targets[i] ? "met" : "NOT met") + ")");
        }
        if (!CPU.available()) {
            System.out.println("(no /proc here: CPU per message not measured)");
            return;
        }
        System.out.println();
        System.out.println("CPU per message (run 2; broker = beam.smp, postgres = all its processes, JVM = this benchmark's,"
                + " relay included), of " + Runtime.getRuntime().availableProcessors() + " cores:");
        System.out.println("| path | CPU µs per message: broker / postgres / JVM | all three | their cores busy | the"
                + " machine's cores busy (kernel included) |");
        System.out.println("|---|---|---|---|---|");
        for (int i = 0; i < paths.length; i++) {
            CpuMeter.Spent s = cpu.get(1)[i];
            System.out.printf(Locale.ROOT, "| %s | %s | %.0f µs | %.2f | %.2f |%n", paths[i], s.perMessage(),
                    s.microsPerMessage(), s.coresBusy(), s.machineCoresBusy());
        }
    }

    private static final CpuMeter CPU = new CpuMeter();
    private CpuMeter.Spent lastCpu;

    /**
     * The ceiling of key window 1 without a database: {@code keys} keys, one confirmed publish in flight per key, a key's
     * next message written as soon as its confirm arrives, one writer thread (the relay's shape, minus the store).
     */
    private double rawPublishPerKey(String queue, int keys) throws Exception {
        try (Channel ch = amqp.createChannel()) {
            ch.confirmSelect();
            java.util.concurrent.ConcurrentSkipListMap<Long, Integer> outstanding = new java.util.concurrent.ConcurrentSkipListMap<>();
            java.util.concurrent.BlockingQueue<Integer> ready = new java.util.concurrent.LinkedBlockingQueue<>();
            AtomicBoolean nacked = new AtomicBoolean();
            ch.addConfirmListener((seq, multiple) -> confirmed(outstanding, ready, seq, multiple),
                    (seq, multiple) -> {
                        nacked.set(true);
                        confirmed(outstanding, ready, seq, multiple);
                    });
            for (int k = 0; k < keys; k++) {
                ready.add(k);
            }
            long t0 = System.nanoTime();
            CpuMeter.Reading cpu0 = CPU.read();
            int written = 0;
            while (written < ROWS || !outstanding.isEmpty()) {
                Integer key = ready.poll(30, TimeUnit.SECONDS); // a key whose previous message was confirmed
                if (key == null) {
                    throw new IllegalStateException("no confirm within 30 s");
                }
                if (written < ROWS) {
                    outstanding.put(ch.getNextPublishSeqNo(), key);
                    ch.basicPublish("", queue, true, new AMQP.BasicProperties.Builder()
                            .messageId(UUID.randomUUID().toString()).deliveryMode(2).build(), BODY);
                    written++;
                }
            }
            if (nacked.get()) {
                throw new IllegalStateException("the broker nacked a publish");
            }
            lastCpu = CPU.read().since(cpu0, ROWS);
            return ROWS / ((System.nanoTime() - t0) / 1e9);
        }
    }

    private static void confirmed(java.util.concurrent.ConcurrentSkipListMap<Long, Integer> outstanding,
            java.util.concurrent.BlockingQueue<Integer> ready, long seq, boolean multiple) {
        java.util.Map<Long, Integer> done = multiple ? outstanding.headMap(seq, true) : outstanding.subMap(seq, true, seq, true);
        for (Map.Entry<Long, Integer> e : new ArrayList<>(done.entrySet())) {
            if (outstanding.remove(e.getKey()) != null) {
                ready.add(e.getValue());
            }
        }
    }

    private static final int ROUNDS = 3;

    private static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    private String queue(String what) {
        String q = "idemkit-bench-outbox-" + tag + "-" + what;
        queues.add(q);
        transport.declare(q);
        return q;
    }

    /** Transactions per second of the credit (alone or through the inbox), with or without an append in it. */
    private double measure(boolean throughInbox, Append append, int threads, double seconds) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong done = new AtomicLong();
        CountDownLatch finished = new CountDownLatch(threads);
        List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int t = 0; t < threads; t++) {
            SplittableRandom random = new SplittableRandom(t);
            Thread th = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        String account = "acc-" + random.nextInt(ACCOUNTS);
                        dev.idemkit.ports.out.Effect<JpaUnitOfWork, Object> effect = w -> {
                            try (PreparedStatement ps = w.connection().prepareStatement(CREDIT)) {
                                ps.setString(1, account);
                                ps.executeUpdate();
                            }
                            if (append == Append.UNIT_OF_WORK) {
                                outbox.append(w, OutboxMessage.of("bench.credited", account, BODY));
                            } else if (append == Append.CONNECTION) {
                                outbox.append(w.connection(), OutboxMessage.of("bench.credited", account, BODY));
                            }
                            return null;
                        };
                        if (throughInbox) {
                            inbox.runOnce(dev.idemkit.domain.inbox.InboxKey.of("bench", UUID.randomUUID().toString()),
                                    FINGERPRINT, effect);
                        } else {
                            pg.db().inTransaction(effect);
                        }
                        done.incrementAndGet();
                    }
                } catch (Throwable e) {
                    errors.add(e);
                } finally {
                    finished.countDown();
                }
            });
            th.start();
        }
        long t0 = System.nanoTime();
        Thread.sleep((long) (seconds * 1000));
        stop.set(true);
        finished.await();
        if (!errors.isEmpty()) {
            throw new IllegalStateException(errors.get(0));
        }
        double rate = done.get() / ((System.nanoTime() - t0) / 1e9);
        pg.execute("DELETE FROM outbox_messages");
        pg.execute("DELETE FROM processed_messages");
        return rate;
    }

    private double rawPublish(String queue) throws Exception {
        try (Channel ch = amqp.createChannel()) {
            ch.confirmSelect();
            long t0 = System.nanoTime();
            CpuMeter.Reading cpu0 = CPU.read();
            for (int i = 0; i < ROWS; i++) {
                ch.basicPublish("", queue, true, new AMQP.BasicProperties.Builder().messageId(UUID.randomUUID().toString())
                        .deliveryMode(2).build(), BODY);
                if (i % 200 == 199) {
                    ch.waitForConfirmsOrDie(30_000);
                }
            }
            ch.waitForConfirmsOrDie(30_000);
            lastCpu = CPU.read().since(cpu0, ROWS);
            return ROWS / ((System.nanoTime() - t0) / 1e9);
        }
    }

    private double transportPublish(String queue, int count) throws Exception {
        AtomicLong next = new AtomicLong();
        Thread[] threads = new Thread[count];
        long t0 = System.nanoTime();
        CpuMeter.Reading cpu0 = CPU.read();
        for (int t = 0; t < threads.length; t++) {
            threads[t] = new Thread(() -> {
                while (next.getAndIncrement() < ROWS) {
                    transport.publish(queue, dev.idemkit.ports.out.OutgoingMessage.of(UUID.randomUUID().toString(), BODY));
                }
            });
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        lastCpu = CPU.read().since(cpu0, ROWS);
        return ROWS / ((System.nanoTime() - t0) / 1e9);
    }

    /** The shipped pipelined publish: each thread keeps up to 200 / threads publishes in flight (raw keeps up to 200). */
    private double transportPublishAsync(String queue, int count) throws Exception {
        AtomicLong next = new AtomicLong();
        int window = Math.max(1, 200 / count);
        Thread[] threads = new Thread[count];
        List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
        long t0 = System.nanoTime();
        CpuMeter.Reading cpu0 = CPU.read();
        for (int t = 0; t < threads.length; t++) {
            threads[t] = new Thread(() -> {
                java.util.concurrent.Semaphore slots = new java.util.concurrent.Semaphore(window);
                while (next.getAndIncrement() < ROWS) {
                    slots.acquireUninterruptibly();
                    transport.publishAsync(queue, dev.idemkit.ports.out.OutgoingMessage.of(UUID.randomUUID().toString(),
                            BODY)).whenComplete((ok, e) -> {
                                if (e != null) {
                                    errors.add(e);
                                }
                                slots.release();
                            });
                }
                slots.acquireUninterruptibly(window);
            });
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        if (!errors.isEmpty()) {
            throw new IllegalStateException("a publish failed", errors.get(0));
        }
        lastCpu = CPU.read().since(cpu0, ROWS);
        return ROWS / ((System.nanoTime() - t0) / 1e9);
    }

    private double relayDrain(String queue, int keys, int keyWindow) throws Exception {
        // through the tracing decorator, as serve wires its relay (Assembly.outboxRelay; no tracing configured)
        RelayDrain.Result r = drain.drain(dev.idemkit.app.tracing.Tracing.none().publishing(transport), queue, ROWS, keys,
                settings().withKeyWindow(keyWindow));
        lastCpu = r.cpu();
        System.out.printf(Locale.ROOT, "  (relay, %d keys, key window %d: %d passes, %.0f %% of pass time publishing,"
                + " the rest in the store's statements and commit)%n", keys, keyWindow, r.passes(), 100 * r.publishingShare());
        return r.rate();
    }

    /** The shipped defaults, with the benchmark's overrides ({@code bench.passes}, {@code bench.batch}, {@code bench.parallelism}, {@code bench.passRows}). */
    static OutboxRelay.Settings settings() {
        OutboxRelay.Settings d = OutboxRelay.Settings.defaults();
        return d.withPasses(Integer.getInteger("bench.passes", d.passes())).withBatch(Integer.getInteger("bench.batch", d.batch()))
                .withParallelism(Integer.getInteger("bench.parallelism", d.parallelism()))
                .withPassRows(Integer.getInteger("bench.passRows", d.passRows()));
    }

    private void latency(String traffic, int rows, long everyMillis, String name, boolean listen) throws Exception {
        String queue = queue((listen ? "listen-" : "poll-") + everyMillis);
        Map<String, Long> committedAt = new ConcurrentHashMap<>();
        Map<String, Long> consumedAt = new ConcurrentHashMap<>();
        long[] latencies = new long[rows];
        AtomicLong seen = new AtomicLong();
        Channel ch = amqp.createChannel();
        ch.basicConsume(queue, true, (t, d) -> {
            long now = System.nanoTime();
            String id = d.getProperties().getMessageId();
            consumedAt.put(id, now);
            Long at = committedAt.get(id);
            int i = (int) seen.getAndIncrement();
            if (at != null && i < latencies.length) {
                latencies[i] = now - at;
            }
        }, t -> { });
        PostgresOutboxStore store = new PostgresOutboxStore(pg.db());
        Steps used = new Steps(listen ? store : new Polling(store));
        try (OutboxRelay relay = new OutboxRelay(used, transport, UnaryOperator.identity(), OutboxRelay.Settings.defaults()
                .withPollInterval(listen ? Duration.ofSeconds(1) : Duration.ofMillis(100)), () -> 0.5, Clock.system(),
                OutboxEvents.none())) {
            relay.start();
            Thread.sleep(300);
            for (int i = 0; i < rows; i++) {
                String id = pg.db().inTransaction(w -> outbox.append(w, OutboxMessage.of(queue, "key", BODY)));
                committedAt.put(id, System.nanoTime());
                Thread.sleep(everyMillis);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (seen.get() < rows && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
        } finally {
            ch.close();
            store.close();
            pg.execute("DELETE FROM outbox_messages");
        }
        long[] sorted = Arrays.stream(latencies).filter(l -> l > 0).sorted().toArray();
        System.out.printf(Locale.ROOT, "| %s | %s | %.1f | %.1f | %.1f |%n", traffic, name, sorted[sorted.length / 2] / 1e6,
                sorted[(int) (sorted.length * 0.99)] / 1e6, sorted[sorted.length - 1] / 1e6);
        steps.add(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s |", traffic, name,
                step(committedAt, used.passStartedAt), step(used.passStartedAt, used.publishCalledAt),
                step(used.publishCalledAt, consumedAt)));
    }

    /**
     * The floor under case 3 on this machine: amqp-client publishing the same persistent message (no database, no relay)
     * every {@code everyMillis}, one at a time with its confirm awaited, to a consumer in this JVM; from the publish call
     * to the consumer.
     */
    private void rawLatency(int rows, long everyMillis) throws Exception {
        String queue = queue("raw-latency-" + everyMillis);
        long[] latencies = new long[rows];
        Map<String, Long> publishedAt = new ConcurrentHashMap<>();
        AtomicLong seen = new AtomicLong();
        try (Channel consumer = amqp.createChannel(); Channel publisher = amqp.createChannel()) {
            consumer.basicConsume(queue, true, (t, d) -> {
                long now = System.nanoTime();
                Long at = publishedAt.get(d.getProperties().getMessageId());
                int i = (int) seen.getAndIncrement();
                if (at != null && i < latencies.length) {
                    latencies[i] = now - at;
                }
            }, t -> { });
            publisher.confirmSelect();
            for (int i = 0; i < rows; i++) {
                String id = UUID.randomUUID().toString();
                publishedAt.put(id, System.nanoTime());
                publisher.basicPublish("", queue, true, new AMQP.BasicProperties.Builder().messageId(id).deliveryMode(2)
                        .build(), BODY);
                publisher.waitForConfirmsOrDie(10_000);
                Thread.sleep(everyMillis);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (seen.get() < rows && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
        }
        long[] sorted = Arrays.stream(latencies).filter(l -> l > 0).sorted().toArray();
        System.out.printf(Locale.ROOT, "| one message every %d ms | raw amqp-client publish -> consumer, no database (the"
                + " floor) | %.1f | %.1f | %.1f |%n", everyMillis, sorted[sorted.length / 2] / 1e6,
                sorted[(int) (sorted.length * 0.99)] / 1e6, sorted[sorted.length - 1] / 1e6);
    }

    /** Where commit -> consumer goes, one line per latency case (printed after the cases). */
    private final List<String> steps = new ArrayList<>();

    /** p50 / p99 in ms of {@code to - from} over the ids in both. */
    private static String step(Map<String, Long> from, Map<String, Long> to) {
        long[] d = from.entrySet().stream().filter(e -> to.containsKey(e.getKey()))
                .mapToLong(e -> to.get(e.getKey()) - e.getValue()).sorted().toArray();
        if (d.length == 0) {
            return "-";
        }
        return String.format(Locale.ROOT, "%.1f / %.1f", d[d.length / 2] / 1e6, d[(int) (d.length * 0.99)] / 1e6);
    }

    /**
     * The store as shipped, noting per row when the pass that handed it out began (or the ask that brought it, in a
     * pass that goes on) and when the relay's publisher got it (the store's statements ran in between). A row that went out in a later pass (not handed out the first time)
     * keeps its last pass's times.
     */
    private static final class Steps extends dev.idemkit.ports.forwarding.ForwardingOutboxStore {
        final Map<String, Long> passStartedAt = new ConcurrentHashMap<>();
        final Map<String, Long> publishCalledAt = new ConcurrentHashMap<>();

        Steps(OutboxStore store) {
            super(store);
        }

        @Override
        public int relay(int first, int max, Instant now, StreamingPublisher publisher) {
            long started = System.nanoTime();
            return delegate().relay(first, max, now, (runs, pass) -> {
                note(runs, started, System.nanoTime());
                publisher.publish(runs, new Pass() {
                    @Override
                    public void more(java.util.Collection<String> keys, int rows,
                            java.util.function.BiConsumer<List<List<dev.idemkit.ports.out.OutboxRow>>, Throwable> answer) {
                        long asked = System.nanoTime(); // a row handed out later: from the ask to its answer
                        pass.more(keys, rows, (more, e) -> {
                            if (more != null) {
                                note(more, asked, System.nanoTime());
                            }
                            answer.accept(more, e);
                        });
                    }

                    @Override
                    public void record(Map<String, dev.idemkit.ports.out.RelayOutcome> outcomes) {
                        pass.record(outcomes);
                    }
                });
            });
        }

        private void note(List<List<dev.idemkit.ports.out.OutboxRow>> runs, long started, long called) {
            for (List<dev.idemkit.ports.out.OutboxRow> run : runs) {
                for (dev.idemkit.ports.out.OutboxRow row : run) {
                    passStartedAt.put(row.id(), started);
                    publishCalledAt.put(row.id(), called);
                }
            }
        }
    }

    /** The shipped store without its LISTEN: waits the poll interval between empty passes, as a polling relay does. */
    private static final class Polling extends dev.idemkit.ports.forwarding.ForwardingOutboxStore {
        Polling(OutboxStore store) {
            super(store);
        }

        @Override
        public void awaitAppend(Duration max) throws InterruptedException {
            Thread.sleep(Math.max(1, max.toMillis()));
        }
    }
}
