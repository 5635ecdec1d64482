package dev.idemkit.ports.service;

import dev.idemkit.domain.Message;
import dev.idemkit.domain.Printable;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.retry.RandomSource;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.out.OutboxEvents;
import dev.idemkit.ports.out.OutboxRow;
import dev.idemkit.ports.out.OutboxRelayStore;
import dev.idemkit.ports.out.RelayOutcome;
import dev.idemkit.ports.out.StoreUnavailableException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

/**
 * The outbox relay (docs/ARCHITECTURE.md section 9): publishes committed outbox rows through a transport with its confirms and has
 * the store mark them sent only after the broker confirmed. The message id is the row's id, so what a crash between
 * publish and mark sends twice is absorbed by the consumer's inbox.
 *
 * <p>Per ordering key oldest first, one row in flight at a time unless {@link Settings#keyWindow()} allows more (the
 * store hands out only heads of their keys and holds them); keys in parallel, all through the transport's pipelined
 * {@link MessageTransport#publishAsync}, written by the pass's own thread ({@link PassPublisher}), which asks the store
 * for more rows while it publishes, in the same pass. A failed publish is retried with the retry policy's backoff; after its attempts, or at once for a
 * non-retryable failure, the row is parked with the reason and blocks its key until an operator redrives it. While the
 * transport's {@link MessageTransport#health} is not {@code UP}, {@link #start()}'s loops take no rows (an outage would
 * otherwise use up every key head's attempts and park it). Between
 * passes the relay waits for a commit notification or the poll interval (polling every 5 ms for 200 ms after a busy
 * pass). Thread-safe; {@link #start()} runs the loop
 * on its own thread, {@link #relayOnce()} is one pass for callers that drive it themselves.
 */
public final class OutboxRelay implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(OutboxRelay.class.getName());
    /**
     * After a pass that found rows, the relay polls every {@link #LINGER_POLL} for this long before it waits for a
     * notification or its poll interval: a store may notify only some commits under load (PostgreSQL: one per 5 ms).
     */
    static final Duration LINGER = Duration.ofMillis(200);
    static final Duration LINGER_POLL = Duration.ofMillis(5);

    /**
     * How the relay works.
     *
     * @param batch rows handed out at once: a pass's first hand-out, and each one it asks for while it publishes
     * @param parallelism keys published at once
     * @param pollInterval the longest wait between passes when no commit notification comes
     * @param retryPolicy attempts and backoff of a failing publish; its last attempt parks the row
     * @param passes passes under way at once ({@link #start()}'s loops): while one waits for the broker's confirms,
     *     another takes and publishes other keys
     * @param keyWindow rows of one ordering key in flight at once: 1 writes a key's next row only after the previous one
     *     was confirmed, so a failed publish never has a later row of its key ahead of it; above 1 a key's rows go out
     *     pipelined, and a failure may let up to {@code keyWindow - 1} later rows of its key reach the queue before its
     *     retry (docs/ARCHITECTURE.md section 9)
     * @param passRows rows one pass may hand out in all (at least {@code batch}): a pass asks for more while it
     *     publishes, in the same transaction, until it has nothing more or reaches this
     */
    public record Settings(int batch, int parallelism, Duration pollInterval, RetryPolicy retryPolicy, int passes,
            int keyWindow, int passRows) {
        public Settings {
            if (passRows < 1 || passRows > 1_000_000) {
                throw new IllegalArgumentException("outbox pass rows must be 1..1000000, got " + passRows);
            }
            if (keyWindow < 1 || keyWindow > 1_000) {
                throw new IllegalArgumentException("outbox key window must be 1..1000, got " + keyWindow);
            }
            if (passes < 1 || passes > 16) {
                throw new IllegalArgumentException("outbox passes must be 1..16, got " + passes);
            }
            if (batch < 1 || batch > 10_000) {
                throw new IllegalArgumentException("outbox batch must be 1..10000, got " + batch);
            }
            if (parallelism < 1 || parallelism > 256) {
                throw new IllegalArgumentException("outbox parallelism must be 1..256, got " + parallelism);
            }
            if (pollInterval.isNegative() || pollInterval.isZero()) {
                throw new IllegalArgumentException("outbox poll interval must be positive, got " + pollInterval);
            }
            Objects.requireNonNull(retryPolicy, "retryPolicy");
        }

        /**
         * Hand-outs of 1000 rows and up to 10,000 rows a pass, 256 keys in flight at once (they cost no thread: the
         * pass's thread writes them all), one pass at a time, key window 1, a poll every second, 10 attempts with
         * 1 s..60 s backoff.
         *
         * <p>A pass asks the store for another hand-out while it publishes (a store that can: PostgreSQL), so its
         * statements run beside the publishing; 10,000 rows a pass in all, then it commits. Why hand-outs of 1000: the
         * store's statements per row cost less in longer ones, and a pass holds the bodies of the rows handed out and
         * not yet recorded in memory, about two hand-outs: with large bodies, take a smaller batch ({@link
         * #withBatch}). More passes at once hide a distant broker's confirm latency; on one 2-core machine running the
         * database and the broker too they gained nothing measurable (1 / 2 passes, OutboxBenchmark in
         * adapters-postgres' README).
         */
        public static Settings defaults() {
            return new Settings(1_000, 256, Duration.ofSeconds(1), RetryPolicy.defaults().withMaxAttempts(10), 1, 1, 10_000);
        }

        public Settings withRetryPolicy(RetryPolicy p) {
            return new Settings(batch, parallelism, pollInterval, p, passes, keyWindow, passRows);
        }

        public Settings withPollInterval(Duration d) {
            return new Settings(batch, parallelism, d, retryPolicy, passes, keyWindow, passRows);
        }

        public Settings withBatch(int n) {
            return new Settings(n, parallelism, pollInterval, retryPolicy, passes, keyWindow, passRows);
        }

        public Settings withParallelism(int n) {
            return new Settings(batch, n, pollInterval, retryPolicy, passes, keyWindow, passRows);
        }

        public Settings withPasses(int n) {
            return new Settings(batch, parallelism, pollInterval, retryPolicy, n, keyWindow, passRows);
        }

        public Settings withPassRows(int n) {
            return new Settings(batch, parallelism, pollInterval, retryPolicy, passes, keyWindow, n);
        }

        public Settings withKeyWindow(int n) {
            return new Settings(batch, parallelism, pollInterval, retryPolicy, passes, n, passRows);
        }
    }

    private final OutboxRelayStore store;
    private final MessageTransport transport;
    private final UnaryOperator<String> queueName;
    private final Settings settings;
    private final Clock clock;
    private final FailureStep failures;
    private final OutboxEvents events;
    private final List<Thread> loops = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** The loops waiting between passes (the ones close() may interrupt at once). */
    private final java.util.Set<Thread> waiting = ConcurrentHashMap.newKeySet();
    private volatile boolean running;

    /**
     * @param queueName maps a row's destination to the transport's queue name (identity unless the transport restricts
     *     names)
     */
    public OutboxRelay(OutboxRelayStore store, MessageTransport transport, UnaryOperator<String> queueName, Settings settings,
            RandomSource random, Clock clock, OutboxEvents events) {
        this.store = Objects.requireNonNull(store, "store");
        this.transport = Objects.requireNonNull(transport, "transport");
        this.queueName = Objects.requireNonNull(queueName, "queueName");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.failures = new FailureStep(settings.retryPolicy(), random, clock);
        this.events = Objects.requireNonNull(events, "events");
    }

    /**
     * One pass: the rows the store hands out, published, their outcomes recorded.
     *
     * @return how many rows were handed out
     * @throws StoreUnavailableException when the store failed (what was published goes out again later, same ids)
     */
    public int relayOnce() {
        PassPublisher pass = new PassPublisher(transport, queueName, settings.parallelism(), settings.keyWindow(),
                settings.batch(), clock, this::failed);
        int n = store.relay(settings.batch(), Math.max(settings.batch(), settings.passRows()), clock.now(), pass);
        count(pass.tally()); // the store returned: it committed them
        return n;
    }

    /**
     * Runs {@code passes} loops, each on a thread of its own, until {@link #close()}: a pass at once while rows come,
     * else on a notification or the poll interval.
     */
    public synchronized void start() {
        if (!loops.isEmpty()) {
            throw new IllegalStateException("the relay is already started");
        }
        running = true;
        for (int i = 0; i < settings.passes(); i++) {
            Thread loop = new Thread(this::run, "idemkit-outbox-relay-" + i);
            loop.setDaemon(true);
            loops.add(loop);
            loop.start();
        }
    }

    private void run() {
        Duration backoff = Duration.ZERO;
        long lastBusy = System.nanoTime() - LINGER.toNanos();
        String paused = null;
        while (running) {
            try {
                // a transport that says it cannot publish (a connection recovering, a broker blocking publishers) would
                // fail every row it is given, each failure an attempt: an outage of minutes would park every key's
                // head. The loop takes no rows until it is back; a publish that fails anyway still counts
                String health = transport.health();
                if (!"UP".equals(health)) {
                    if (paused == null) {
                        LOG.log(Level.WARNING, "decision=outbox_paused transport=\"{0}\" (no rows taken until it is up)",
                                Printable.text(health, 300));
                    }
                    paused = health;
                    waiting.add(Thread.currentThread()); // close() interrupts this wait at once
                    try {
                        if (!running || !sleep(min(settings.pollInterval(), Duration.ofSeconds(1)))) {
                            return;
                        }
                    } finally {
                        waiting.remove(Thread.currentThread());
                    }
                    continue;
                }
                if (paused != null) {
                    LOG.log(Level.INFO, "decision=outbox_resumed (the transport is up)");
                    paused = null;
                }
                int n = relayOnce();
                if (!running) {
                    return;
                }
                backoff = Duration.ZERO;
                if (n > 0) {
                    lastBusy = System.nanoTime();
                } else {
                    // just busy: rows whose commit notification a store skipped under load come within this window
                    boolean lingering = System.nanoTime() - lastBusy < LINGER.toNanos();
                    waiting.add(Thread.currentThread());
                    try {
                        if (running) {
                            store.awaitAppend(lingering ? LINGER_POLL : settings.pollInterval());
                        }
                    } finally {
                        waiting.remove(Thread.currentThread());
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException | Error e) {
                // the store (or something unforeseen) failed: nothing of the pass was recorded; wait and go on. An
                // Error too: a relay thread that died would stop relaying silently
                if (e instanceof VirtualMachineError && !(e instanceof OutOfMemoryError)) {
                    throw e;
                }
                backoff = backoff.isZero() ? Duration.ofMillis(100) : min(backoff.multipliedBy(2), Duration.ofSeconds(10));
                LOG.log(Level.WARNING, "decision=outbox_pass_failed error=\"{0}\" next_pass_in_ms={1}",
                        Printable.text(RetryPolicy.describe(e), 300), backoff.toMillis());
                if (!sleep(backoff)) {
                    return;
                }
            }
        }
    }

    /** Counts a pass's outcomes once the store has recorded them (a pass that fails to commit counts nothing). */
    private void count(PassPublisher.Tally tally) {
        for (int i = 0; i < tally.failed(); i++) {
            events.failed();
        }
        for (int i = 0; i < tally.parked(); i++) {
            events.parked();
        }
        if (tally.sent() > 0) {
            events.published(tally.sent());
        }
    }

    /**
     * The failure step, the same as a consumer's ({@link FailureStep}): the row is a delivery whose retry is a later
     * hand-out and whose dead letter is a parked row that blocks its key.
     */
    private RelayOutcome failed(OutboxRow row, Throwable e) {
        RowDelivery delivery = new RowDelivery(row);
        FailureStep.Settled settled = failures.fail(delivery, e);
        if (settled.decision() == ConsumerEvents.Decision.RETRIED) {
            LOG.log(Level.WARNING, "decision=outbox_retry message_id={0} destination={1} ordering_key={2} attempt={3}"
                    + " retry_in_ms={4} error=\"{5}\"", Printable.id(row.id()), Printable.id(row.message().destination()),
                    Printable.id(row.message().orderingKey()), row.attempt(), settled.delay().toMillis(),
                    Printable.text(settled.attempt().error(), 300));
        } else {
            LOG.log(Level.ERROR, "decision=outbox_parked message_id={0} destination={1} ordering_key={2} attempt={3}"
                    + " reason=\"{4}\" (the key's later messages wait until it is redriven)", Printable.id(row.id()),
                    Printable.id(row.message().destination()), Printable.id(row.message().orderingKey()), row.attempt(),
                    Printable.text(settled.reason(), 300));
        }
        return delivery.outcome;
    }

    /**
     * An outbox row as a delivery of the failure step: retrying it is handing it out again after the delay, dead-lettering
     * it is parking it with the reason. Its history's numbering goes on across redrives (a redriven row's attempts count
     * from 1 again for the retry policy, its failures do not).
     */
    private final class RowDelivery implements Delivery {
        private final OutboxRow row;
        private RelayOutcome outcome;

        RowDelivery(OutboxRow row) {
            this.row = row;
        }

        @Override
        public Message message() {
            OutboxMessage m = row.message();
            return new Message(row.id(), m.body(), m.headers(), m.destination());
        }

        @Override
        public int attempt() {
            return row.attempt();
        }

        @Override
        public List<AttemptRecord> history() {
            return row.failures();
        }

        @Override
        public boolean redelivered() {
            return !row.failures().isEmpty();
        }

        @Override
        public void ack() {
            throw new IllegalStateException("a failed outbox row is retried or parked, never acknowledged");
        }

        @Override
        public void retryAfter(Duration delay, AttemptRecord failed) {
            outcome = new RelayOutcome.Failed(numbered(failed), failed.at().plus(delay));
        }

        @Override
        public void deadLetter(String reason, AttemptRecord failed) {
            outcome = new RelayOutcome.Parked(numbered(failed), reason);
        }

        private AttemptRecord numbered(AttemptRecord failed) {
            return new AttemptRecord(row.failures().size() + 1, failed.at(), failed.error());
        }
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    private boolean sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
            return running;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Stops the loops: a pass under way finishes (its publishes are bounded by the transport's confirm timeout) and
     * records what it did; a wait for the next pass is cut short. Bounded: about 15 s plus one confirm timeout (a pass
     * still publishing after 1 s is interrupted: it writes no more rows, waits for the confirms of those written and
     * records them; the rest go out later).
     */
    @Override
    public void close() {
        running = false;
        waiting.forEach(Thread::interrupt);
        long deadline = System.nanoTime() + 15_000_000_000L;
        try {
            for (Thread t : loops) {
                t.join(1_000);
                if (t.isAlive()) {
                    t.interrupt(); // a pass that outlived the bound: its publishes still all end before it records
                    t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
