package dev.idemkit.ports.service;

import dev.idemkit.domain.Printable;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.retry.RandomSource;
import dev.idemkit.domain.retry.RetryDecision;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutboxEvents;
import dev.idemkit.ports.out.OutboxRow;
import dev.idemkit.ports.out.OutboxStore;
import dev.idemkit.ports.out.RelayOutcome;
import dev.idemkit.ports.out.StoreUnavailableException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * The outbox relay (DESIGN.md section 9): publishes committed outbox rows through a transport with its confirms and has
 * the store mark them sent only after the broker confirmed. The message id is the row's id, so what a crash between
 * publish and mark sends twice is absorbed by the consumer's inbox.
 *
 * <p>Per ordering key one row at a time, oldest first (the store hands out only heads of their keys and holds them);
 * keys in parallel. A failed publish is retried with the retry policy's backoff; after its attempts, or at once for a
 * non-retryable failure, the row is parked with the reason and blocks its key until an operator redrives it. Between
 * passes the relay waits for a commit notification or the poll interval. Thread-safe; {@link #start()} runs the loop
 * on its own thread, {@link #relayOnce()} is one pass for callers that drive it themselves.
 */
public final class OutboxRelay implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(OutboxRelay.class.getName());

    /**
     * How the relay works.
     *
     * @param batch rows handed out per pass
     * @param parallelism keys published at once
     * @param pollInterval the longest wait between passes when no commit notification comes
     * @param retryPolicy attempts and backoff of a failing publish; its last attempt parks the row
     */
    public record Settings(int batch, int parallelism, Duration pollInterval, RetryPolicy retryPolicy) {
        public Settings {
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

        /** 200 rows a pass, 32 keys at once, a poll every second, 10 attempts with 1 s..60 s backoff. */
        public static Settings defaults() {
            return new Settings(200, 32, Duration.ofSeconds(1), RetryPolicy.defaults().withMaxAttempts(10));
        }

        public Settings withRetryPolicy(RetryPolicy p) {
            return new Settings(batch, parallelism, pollInterval, p);
        }

        public Settings withPollInterval(Duration d) {
            return new Settings(batch, parallelism, d, retryPolicy);
        }

        public Settings withBatch(int n) {
            return new Settings(n, parallelism, pollInterval, retryPolicy);
        }

        public Settings withParallelism(int n) {
            return new Settings(batch, n, pollInterval, retryPolicy);
        }
    }

    private final OutboxStore store;
    private final MessageTransport transport;
    private final UnaryOperator<String> queueName;
    private final Settings settings;
    private final RandomSource random;
    private final Clock clock;
    private final OutboxEvents events;
    private final ExecutorService publishers;
    private volatile Thread loop;
    private volatile boolean running;

    /**
     * @param queueName maps a row's destination to the transport's queue name (identity unless the transport restricts
     *     names)
     */
    public OutboxRelay(OutboxStore store, MessageTransport transport, UnaryOperator<String> queueName, Settings settings,
            RandomSource random, Clock clock, OutboxEvents events) {
        this.store = Objects.requireNonNull(store, "store");
        this.transport = Objects.requireNonNull(transport, "transport");
        this.queueName = Objects.requireNonNull(queueName, "queueName");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.random = Objects.requireNonNull(random, "random");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.events = Objects.requireNonNull(events, "events");
        this.publishers = Executors.newFixedThreadPool(settings.parallelism(), r -> {
            Thread t = new Thread(r, "idemkit-outbox-publish");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * One pass: the rows the store hands out, published, their outcomes recorded.
     *
     * @return how many rows were handed out
     * @throws StoreUnavailableException when the store failed (what was published goes out again later, same ids)
     */
    public int relayOnce() {
        return store.relay(settings.batch(), clock.now(), this::publish);
    }

    /** Runs passes on a thread of its own until {@link #close()}: at once while rows come, else on notification or poll. */
    public synchronized void start() {
        if (loop != null) {
            throw new IllegalStateException("the relay is already started");
        }
        running = true;
        loop = new Thread(this::run, "idemkit-outbox-relay");
        loop.setDaemon(true);
        loop.start();
    }

    private void run() {
        Duration backoff = Duration.ZERO;
        while (running) {
            try {
                int n = relayOnce();
                backoff = Duration.ZERO;
                if (n == 0) {
                    store.awaitAppend(settings.pollInterval());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                // the store (or something unforeseen) failed: nothing of the pass was recorded; wait and go on
                backoff = backoff.isZero() ? Duration.ofMillis(100) : min(backoff.multipliedBy(2), Duration.ofSeconds(10));
                LOG.log(Level.WARNING, "decision=outbox_pass_failed error=\"{0}\" next_pass_in_ms={1}",
                        Printable.text(RetryPolicy.describe(e), 300), backoff.toMillis());
                if (!sleep(backoff)) {
                    return;
                }
            }
        }
    }

    private Map<String, RelayOutcome> publish(List<List<OutboxRow>> runs) {
        Map<String, RelayOutcome> outcomes = new ConcurrentHashMap<>();
        List<Future<?>> tasks = new ArrayList<>(runs.size());
        for (List<OutboxRow> run : runs) {
            tasks.add(publishers.submit(() -> publishRun(run, outcomes)));
        }
        for (Future<?> t : tasks) {
            try {
                t.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                // what was confirmed so far is in outcomes; the rest stays as it was
                break;
            } catch (java.util.concurrent.ExecutionException e) {
                LOG.log(Level.ERROR, "outbox publish task failed: {0}", e.getCause().toString());
            }
        }
        return Map.copyOf(outcomes);
    }

    private void publishRun(List<OutboxRow> run, Map<String, RelayOutcome> outcomes) {
        int sent = 0;
        for (OutboxRow row : run) {
            try {
                transport.publish(queueName.apply(row.message().destination()), row.outgoing());
                outcomes.put(row.id(), new RelayOutcome.Sent(clock.now()));
                sent++;
            } catch (RuntimeException e) {
                outcomes.put(row.id(), failed(row, e));
                break; // the rows after it wait: order per key
            }
        }
        if (sent > 0) {
            events.published(sent);
        }
    }

    private RelayOutcome failed(OutboxRow row, RuntimeException e) {
        int attempt = row.attempt();
        AttemptRecord record = new AttemptRecord(row.failures().size() + 1, clock.now(), RetryPolicy.describe(e));
        RetryDecision decision = settings.retryPolicy().decide(attempt, e, random);
        if (decision instanceof RetryDecision.RetryAfter r) {
            events.failed();
            LOG.log(Level.WARNING, "decision=outbox_retry message_id={0} destination={1} ordering_key={2} attempt={3}"
                    + " retry_in_ms={4} error=\"{5}\"", Printable.id(row.id()), Printable.id(row.message().destination()),
                    Printable.id(row.message().orderingKey()), attempt, r.delay().toMillis(),
                    Printable.text(record.error(), 300));
            return new RelayOutcome.Failed(record, clock.now().plus(r.delay()));
        }
        String reason = ((RetryDecision.DeadLetter) decision).reason();
        events.parked();
        LOG.log(Level.ERROR, "decision=outbox_parked message_id={0} destination={1} ordering_key={2} attempt={3}"
                + " reason=\"{4}\" (the key's later messages wait until it is redriven)", Printable.id(row.id()),
                Printable.id(row.message().destination()), Printable.id(row.message().orderingKey()), attempt,
                Printable.text(reason, 300));
        return new RelayOutcome.Parked(record, reason);
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

    /** Stops the loop after its current pass (bounded: 15 s) and the publishing threads. */
    @Override
    public void close() {
        running = false;
        Thread t = loop;
        if (t != null) {
            t.interrupt();
            try {
                t.join(15_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        publishers.shutdown();
        try {
            if (!publishers.awaitTermination(5, TimeUnit.SECONDS)) {
                publishers.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            publishers.shutdownNow();
        }
    }
}
