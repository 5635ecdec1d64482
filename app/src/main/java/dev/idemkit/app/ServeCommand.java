package dev.idemkit.app;

import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.config.ConfigException;
import dev.idemkit.app.http.ApiKeys;
import dev.idemkit.app.http.OperatorConsole;
import dev.idemkit.app.http.ApiServer;
import dev.idemkit.app.http.PaymentsApi;
import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.app.wiring.ConsumerKind;
import dev.idemkit.app.wiring.RetentionRun;
import dev.idemkit.ports.in.DeadLetters;
import dev.idemkit.ports.out.OutboxMaintenance;
import dev.idemkit.ports.out.OutboxStore;
import dev.idemkit.ports.out.Subscription;
import dev.idemkit.ports.service.OutboxRelay;
import dev.idemkit.app.consumers.OrderPlaced;
import dev.idemkit.app.payments.Payment;
import dev.idemkit.ports.service.BatchingConsumer;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code idemkit serve}: the consumers of {@code orders.placed} and {@code accounts.credit}, the HTTP
 * API, the outbox relay (PostgreSQL), metrics, scheduled retention and DLQ alerting. On SIGTERM it stops taking work, lets in-flight
 * deliveries settle (unsettled ones go back to the broker), then closes.
 */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Run the consumers, the payments API, metrics, retention and DLQ alerting.")
final class ServeCommand extends AppCommand {
    private static final Logger LOG = LoggerFactory.getLogger(ServeCommand.class);
    /** How long a SIGTERM waits for the subscriptions, the API and the engines to close. */
    private static final Duration CLOSE_BOUND = Duration.ofSeconds(60);


    @Option(names = "--dlq-check-every", defaultValue = "30", description = "seconds between DLQ depth checks (default 30)")
    long dlqEverySeconds;

    @Option(names = "--batch-size", defaultValue = "100", description = "deliveries per transaction at most"
            + " (default 100; 1: one delivery per transaction)")
    int batchSize;

    @Option(names = "--batch-wait", defaultValue = "3", paramLabel = "MS",
            description = "milliseconds a batch waits to fill before it commits what it has (default 3)")
    long batchWaitMillis;

    @Option(names = "--redrive-rate", defaultValue = "50", description = "dead letters the console redrives per second"
            + " at most (default 50)")
    double redrivesPerSecond;

    @Option(names = "--outbox-attempts", defaultValue = "10", description = "publishes of an outbox message before it is"
            + " parked for an operator (default 10)")
    int outboxAttempts;

    @Override
    public Integer call() throws Exception {
        if (!(redrivesPerSecond > 0) || redrivesPerSecond > 10_000) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--redrive-rate must be in (0, 10000]");
        }
        if (outboxAttempts < 1 || outboxAttempts > 1000) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--outbox-attempts must be 1..1000");
        }
        if (batchSize < 1 || batchSize > 10_000 || batchWaitMillis < 0 || batchWaitMillis > 1_000) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                    "--batch-size must be 1..10000 and --batch-wait 0..1000 ms");
        }
        AppSettings settings = settings();
        Map<String, String> keys = new LinkedHashMap<>(settings.http().apiKeys());
        if (keys.isEmpty()) {
            byte[] random = new byte[16];
            new SecureRandom().nextBytes(random);
            keys.put("demo", "demo-" + HexFormat.of().formatHex(random));
            out().println("idemkit no API keys configured: generated one for client 'demo' (this run only):");
            out().println("idemkit   Authorization: Bearer " + keys.get("demo"));
        }
        ApiKeys apiKeys = ApiKeys.of(keys);
        Map<String, String> operatorKeys = new LinkedHashMap<>(settings.http().operatorKeys());
        if (operatorKeys.isEmpty()) {
            byte[] random = new byte[16];
            new SecureRandom().nextBytes(random);
            operatorKeys.put("operator", "op-" + HexFormat.of().formatHex(random));
            out().println("idemkit no operator keys configured: generated one for the dead-letter console (this run"
                    + " only):");
            out().println("idemkit   Authorization: Bearer " + operatorKeys.get("operator"));
        }
        ApiKeys operators = ApiKeys.of(operatorKeys);
        CountDownLatch stopped = new CountDownLatch(1);
        CountDownLatch closed = new CountDownLatch(1);
        boolean stopping = false;
        try (Assembly assembly = assemble(settings)) {
            List<Subscription> subscriptions = new ArrayList<>();
            List<BatchingConsumer<?>> batchers = new ArrayList<>();
            ApiServer api;
            Map<String, DeadLetters> deadLetters = new LinkedHashMap<>();
            for (ConsumerKind kind : ConsumerKind.values()) {
                deadLetters.put(assembly.transportBinding().queue(kind.queue()), assembly.deadLetters(
                        kind.consumerName(), alert -> LOG.error("ALERT {}", alert.summary())));
            }
            OperatorConsole console = new OperatorConsole(deadLetters, assembly.redrives(deadLetters,
                    redrivesPerSecond), operators, settings.deadLetters().alertThreshold(), assembly.clock());
            try {
                api = ApiServer.start(new InetSocketAddress(settings.http().port()), OperatorConsole.routes(console,
                        new PaymentsApi(assembly.paymentCharger(), assembly.store().ledger(), apiKeys,
                                assembly.metrics(), () -> Map.of("store", assembly.store().health(),
                                        "transport", assembly.transport().health()),
                                dev.idemkit.domain.httpkey.KeyPolicy.defaults(), assembly.tracing())),
                        settings.http().limits());
            } catch (BindException e) {
                throw new ConfigException("http.port", "port " + settings.http().port() + " is already in use");
            } catch (IOException e) {
                throw new ConfigException("http.port", "cannot listen on port " + settings.http().port() + ": "
                        + e.getMessage());
            }
            OutboxRelay relay = null;
            ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "idemkit-scheduler");
                t.setDaemon(true);
                return t;
            });
            ScheduledExecutorService retention = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "idemkit-retention");
                t.setDaemon(true);
                return t;
            });
            try {
                for (ConsumerKind kind : ConsumerKind.values()) {
                    String queue = assembly.transportBinding().queue(kind.queue());
                    if (batchSize == 1) {
                        subscriptions.add(assembly.transport().subscribe(queue, assembly.consumer(kind)));
                    } else {
                        BatchingConsumer<?> batching = assembly.batchedConsumer(kind, BatchingConsumer.BatchSettings
                                .defaults().withMaxBatch(batchSize).withLinger(Duration.ofMillis(batchWaitMillis)));
                        batchers.add(batching);
                        subscriptions.add(assembly.transport().subscribe(queue, batching));
                    }
                    out().println("idemkit " + assembly.deadLetterRetention(queue));
                    DeadLetters dlq = deadLetters.get(queue);
                    scheduler.scheduleWithFixedDelay(() -> checkDlq(assembly, dlq, queue), 0, dlqEverySeconds,
                            TimeUnit.SECONDS);
                }
                // a thread of its own: a run that works off a backlog takes as long as it takes, beside the DLQ checks
                long every = settings.store().retention().every().toMillis();
                retention.scheduleWithFixedDelay(() -> retention(assembly, () -> stopped.getCount() > 0), every, every,
                        TimeUnit.MILLISECONDS);
                relay = assembly.outboxRelay(outboxAttempts).orElse(null);
                if (relay != null) {
                    relay.start();
                    assembly.store().outbox().ifPresent(o -> scheduler.scheduleWithFixedDelay(
                            () -> outboxStats(assembly, o), 0, 5, TimeUnit.SECONDS));
                    out().println("idemkit relaying the outbox (" + Payment.CREATED_EVENT + ", "
                            + OrderPlaced.RESERVED_EVENT + ") after each commit; a message is parked after "
                            + outboxAttempts + " failed publishes");
                }
                out().println("idemkit consuming " + assembly.transportBinding().queue(ConsumerKind.RESERVE_INVENTORY.queue())
                        + " and " + assembly.transportBinding().queue(ConsumerKind.CREDIT_ACCOUNT.queue())
                        + (batchSize == 1 ? ", one delivery per transaction" : ", up to " + batchSize
                                + " deliveries per transaction (waiting at most " + batchWaitMillis + " ms)"));
                out().println("idemkit HTTP on http://localhost:" + api.port()
                        + "  (POST /payments, GET /payments/{id}, GET /payments?account_id=, GET /health, GET /metrics,"
                        + " GET /idempotency; dead-letter console: /console, JSON API /ops/...)");
                // the JVM halts as soon as every shutdown hook has returned: this one returns only once the main
                // thread has closed everything, so that pending settles (SQS batch deletes, acks) reach the broker
                Thread hook = new Thread(() -> {
                    out().println("idemkit stopping: no new work; letting in-flight deliveries settle");
                    stopped.countDown();
                    awaitQuietly(closed, CLOSE_BOUND);
                }, "idemkit-shutdown");
                Runtime.getRuntime().addShutdownHook(hook);
                stopped.await();
                batchers.forEach(BatchingConsumer::close); // first: it settles what it queued, then hands over
                subscriptions.forEach(Subscription::close);
                api.close();
                console.close(); // its redrive jobs stop between two dead letters, before the broker is closed
            } finally {
                scheduler.shutdownNow();
                retention.shutdownNow(); // a run in progress stops before its next batch
                if (relay != null) {
                    relay.close(); // after the consumers: what they appended last goes out now or at the next start
                }
            }
            stopping = true;
        } finally {
            if (stopping) {
                out().println("idemkit stopped");
            }
            closed.countDown();
        }
        return 0;
    }

    private static void awaitQuietly(CountDownLatch latch, Duration bound) {
        try {
            if (!latch.await(bound.toMillis(), TimeUnit.MILLISECONDS)) {
                LOG.warn("closing took longer than {}; stopping anyway", bound);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void checkDlq(Assembly assembly, DeadLetters dlq, String queue) {
        try {
            assembly.metrics().dlqDepth(queue, dlq.depth(queue));
            dlq.checkDepth(queue);
        } catch (RuntimeException e) {
            LOG.warn("DLQ check of {} failed: {}", queue, e.toString());
        }
    }

    private static void outboxStats(Assembly assembly, OutboxMaintenance outbox) {
        try {
            assembly.metrics().outboxStats(outbox.stats(assembly.clock().now()));
        } catch (RuntimeException e) {
            LOG.warn("outbox stats failed: {}", e.toString());
        }
    }

    /** One retention run; a failure is logged and counted, never thrown (it would cancel every later run). */
    private static void retention(Assembly assembly, java.util.function.BooleanSupplier keepGoing) {
        try {
            RetentionRun run = assembly.store().purgeExpired(assembly.clock().now(), keepGoing);
            assembly.metrics().retention(run.deleted(), run.oldestInboxKey(), run.caughtUp());
            LOG.info("retention: {}", run.summary());
        } catch (RuntimeException | LinkageError | AssertionError e) {
            assembly.metrics().retentionFailed();
            LOG.warn("retention failed (the next run tries again): {}", e.toString());
        }
    }

}
