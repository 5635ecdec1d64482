package dev.idemkit.app.wiring;

import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.config.ConfigException;
import dev.idemkit.app.metrics.Metrics;
import dev.idemkit.app.payments.Payment;
import dev.idemkit.app.payments.PaymentCharger;
import dev.idemkit.app.consumers.OrderPlaced;
import dev.idemkit.domain.ConsumerName;
import dev.idemkit.domain.deadletter.AlertPolicy;
import dev.idemkit.domain.deadletter.RedriveWindow;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.FailureClassifier;
import dev.idemkit.domain.retry.Jitter;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.in.DeadLetters;
import dev.idemkit.ports.out.Alerts;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.app.tracing.Tracing;
import dev.idemkit.app.tracing.TracingSetup;
import dev.idemkit.ports.out.DeadLetterQueue;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.UnitOfWork;
import dev.idemkit.ports.service.BatchingConsumer;
import dev.idemkit.ports.service.ConsumerRuntime;
import dev.idemkit.ports.service.ConsumerSettings;
import dev.idemkit.ports.service.DeadLetterService;
import dev.idemkit.ports.service.MessageHandler;
import dev.idemkit.ports.service.OutboxRelay;
import dev.idemkit.ports.service.ProcessedKeys;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The adapters chosen by configuration, started and wired: a store binding, a transport and its
 * dead-letter queue, metrics, and the services of {@code ports} on top. Where nothing is configured,
 * embedded real engines are started (and {@link #banner()} says so). Closes everything it started.
 */
public final class Assembly implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Assembly.class);

    private final AppSettings settings;
    private final EmbeddedEngines engines;
    private final StoreBinding<?> store;
    private final TransportBinding transport;
    private final Metrics metrics = new Metrics();
    private Tracing tracing = Tracing.none();
    private ConsumerEvents events = tracing.events(metrics);
    private final Clock clock = Clock.system();
    private final List<String> banner = new ArrayList<>();

    private Assembly(AppSettings settings, EmbeddedEngines engines, StoreBinding<?> store, TransportBinding transport) {
        this.settings = settings;
        this.engines = engines;
        this.store = store;
        this.transport = transport;
        banner.add("store:     " + store.describe());
        banner.add("transport: " + transport.description());
        banner.add("guarantee: " + guaranteeLine());
        banner.add("outbox:    " + (store.outbox().isPresent()
                ? Payment.CREATED_EVENT + " and " + OrderPlaced.RESERVED_EVENT + " commit with their effects; serve relays"
                        + " them after the commit (message id = the outbox row's id; published one at a time per account"
                        + " or customer, which a RabbitMQ queue keeps; SQS standard queues do not keep order)"
                : "none on this store: the example service emits no events"));
    }

    /**
     * Starts what the settings name.
     *
     * @throws ConfigException when the dedup window is shorter than the redelivery horizon
     * @throws RuntimeException when a service cannot be reached (the message names it)
     */
    public static Assembly start(AppSettings settings) {
        Assembly a = startWithout(settings);
        a.traceWith(TracingSetup.fromEnvironment(settings.tracing().otelEnvironment()));
        return a;
    }

    /** As {@link #start(AppSettings)}, traced by {@code tracing} (a test's in-memory SDK) instead of the environment's. */
    public static Assembly start(AppSettings settings, Tracing tracing) {
        Assembly a = startWithout(settings);
        a.traceWith(tracing);
        return a;
    }

    private void traceWith(Tracing t) {
        this.tracing = t;
        this.events = t.events(metrics);
        banner.add("traces:    " + t.description());
    }

    /** The traces of this assembly's consumers, publishes and redrives. */
    public Tracing tracing() {
        return tracing;
    }

    private static Assembly startWithout(AppSettings settings) {
        checkDedupWindow(settings);
        EmbeddedEngines engines = new EmbeddedEngines();
        StoreBinding<?> store = null;
        try {
            store = StoreBinding.start(settings, engines);
            TransportBinding transport = TransportBinding.start(settings, engines, store);
            return new Assembly(settings, engines, store, transport);
        } catch (RuntimeException e) {
            if (store != null) {
                store.close();
            }
            engines.close();
            throw e;
        }
    }

    /**
     * docs/ARCHITECTURE.md section 6: the dedup window must outlive every way a message can come back, i.e. all
     * retry delays plus the age up to which a dead letter is redriven on one approval ({@code dlq.retention}; the
     * dead-letter service refuses older ones without a second approval).
     */
    static void checkDedupWindow(AppSettings s) {
        Duration horizon = retryPolicy(s).longestRetryHorizon().plus(s.deadLetters().retention());
        if (s.store().inboxRetention().compareTo(horizon) < 0) {
            throw new ConfigException("inbox.retention", "the dedup window " + s.store().inboxRetention()
                    + " is shorter than the longest redelivery horizon " + horizon + " (retries "
                    + retryPolicy(s).longestRetryHorizon() + " + dlq.retention " + s.deadLetters().retention()
                    + "); a message could come back after its key was purged");
        }
    }

    public static RetryPolicy retryPolicy(AppSettings s) {
        return new RetryPolicy(s.retry().maxAttempts(), Backoff.exponential(s.retry().backoffBase(), s.retry().backoffCap(), Jitter.FULL),
                FailureClassifier.defaults());
    }

    /** What was assembled, for the start-up banner: engines, and the guarantee of the combination. */
    public List<String> banner() {
        return List.copyOf(banner);
    }

    public String guaranteeLine() {
        return "consumers: " + store.guarantee().description() + " (for the app's effects, which live in the store;"
                + " for effects anywhere else: duplicates reduced, not excluded); payments API: " + store.paymentsGuarantee();
    }

    public AppSettings settings() {
        return settings;
    }

    public StoreBinding<?> store() {
        return store;
    }

    public MessageTransport transport() {
        return transport.transport();
    }

    public DeadLetterQueue deadLetterQueue() {
        return transport.deadLetters();
    }

    public TransportBinding transportBinding() {
        return transport;
    }

    public Metrics metrics() {
        return metrics;
    }

    public Clock clock() {
        return clock;
    }

    public EmbeddedEngines engines() {
        return engines;
    }

    /** The payments flow of {@code POST /payments} for the assembled store (24 h TTL, 10 s wait bound). */
    public PaymentCharger paymentCharger() {
        return store.charger(KeyPolicy.defaults());
    }

    /** The consumer runtime for one of the app's consumers, with the configured retry policy. */
    public DeliveryHandler consumer(ConsumerKind kind) {
        return consumer(store, kind.consumerName(), kind);
    }

    /** The same, under another consumer name (exercises use fresh names). */
    public DeliveryHandler consumer(String consumerName, ConsumerKind kind) {
        return consumer(store, consumerName, kind);
    }

    /** A consumer running any handler on this store's unit of work. */
    public <U extends UnitOfWork> DeliveryHandler consumer(StoreBinding<U> binding, String consumerName,
            MessageHandler<? super U> handler) {
        return consumer(binding, consumerName, handler, retryPolicy(settings));
    }

    /** A consumer running any handler on this store's unit of work, with its own retry policy. */
    public <U extends UnitOfWork> DeliveryHandler consumer(StoreBinding<U> binding, String consumerName,
            MessageHandler<? super U> handler, RetryPolicy policy) {
        ConsumerSettings cs = ConsumerSettings.defaults(consumerName).withRetryPolicy(policy);
        SplittableRandom random = new SplittableRandom();
        return new ConsumerRuntime<>(cs, binding.inbox(), handler, () -> {
            synchronized (random) {
                return random.nextDouble();
            }
        }, clock, events);
    }

    private <U extends UnitOfWork> DeliveryHandler consumer(StoreBinding<U> binding, String name, ConsumerKind kind) {
        return consumer(binding, name, kind.handler(binding.effects()));
    }

    /**
     * One of the app's consumers, batched ({@link BatchingConsumer}: many deliveries per transaction where the store
     * batches atomically, settled after the commit); close it before its subscription.
     */
    public BatchingConsumer<?> batchedConsumer(ConsumerKind kind, BatchingConsumer.BatchSettings batch) {
        return batched(store, kind.consumerName(), kind, batch);
    }

    /** The same, under another consumer name (benchmarks use fresh names). */
    public BatchingConsumer<?> batchedConsumer(String consumerName, ConsumerKind kind,
            BatchingConsumer.BatchSettings batch) {
        return batched(store, consumerName, kind, batch);
    }

    private <U extends UnitOfWork> BatchingConsumer<U> batched(StoreBinding<U> binding, String consumerName,
            ConsumerKind kind, BatchingConsumer.BatchSettings batch) {
        ConsumerSettings cs = ConsumerSettings.defaults(consumerName).withRetryPolicy(retryPolicy(settings));
        SplittableRandom random = new SplittableRandom();
        return new BatchingConsumer<>(cs, binding.inbox(), kind.batchHandler(binding.effects()),
                kind.handler(binding.effects()), batch, () -> {
            synchronized (random) {
                return random.nextDouble();
            }
        }, clock, events);
    }

    /**
     * The outbox relay of the store's outbox onto the transport (empty when the store has none): the app's retry
     * backoff, {@code attempts} publishes per row before it is parked.
     */
    public Optional<OutboxRelay> outboxRelay(int attempts) {
        OutboxRelay.Settings relay = OutboxRelay.Settings.defaults().withRetryPolicy(retryPolicy(settings)
                .withMaxAttempts(attempts));
        SplittableRandom random = new SplittableRandom();
        return store.outbox().map(o -> new OutboxRelay(o, tracing.publishing(transport()), transport::queue, relay,
                () -> {
            synchronized (random) {
                return random.nextDouble();
            }
        }, clock, metrics));
    }

    /** Dead-letter operations for a queue whose consumer is {@code kind}, alerting through {@code alerts}. */
    /**
     * The redrive operation over {@code queues} (work queue to its consumer's dead-letter operations): one per process,
     * shared by whoever asks (the console, the command line), audited in the store, traced, at most {@code perSecond}.
     */
    public dev.idemkit.ports.in.Redrives redrives(java.util.Map<String, DeadLetters> queues, double perSecond) {
        return new dev.idemkit.ports.service.RedriveService(queues, store.redriveAudit(), clock, perSecond,
                tracing.redriveEvents());
    }

    public DeadLetters deadLetters(String consumerName, Alerts alerts) {
        return new DeadLetterService(deadLetterQueue(), alerts, new AlertPolicy(settings.deadLetters().alertThreshold()), clock,
                ProcessedKeys.of(store.inbox(), ConsumerName.of(consumerName)), new RedriveWindow(settings.deadLetters().retention()));
    }

    /**
     * What happens to the dead letters of {@code queue}, for the start-up banner: how long the broker keeps them (as it
     * reports it; RabbitMQ's DLQ and ElasticMQ keep them until removed, SQS 14 days) and how old one may be for a
     * redrive on one approval ({@code dlq.retention}, which {@link #checkDedupWindow} keeps within the dedup window
     * with the retries). An older one needs a second approval, so a broker that keeps dead letters longer than the
     * dedup window cannot bring one back past it unnoticed.
     */
    public String deadLetterRetention(String queue) {
        String kept = deadLetterQueue().retention(queue).map(d -> "for " + d).orElse("until removed");
        return "dead letters of " + queue + " are kept by the broker " + kept + "; a redrive on one approval takes"
                + " those up to " + settings.deadLetters().retention() + " old (the dedup window is " + settings.store().inboxRetention()
                + "), older ones need a second approval";
    }

    @Override
    public void close() {
        try {
            transport.close();
        } catch (RuntimeException e) {
            LOG.warn("closing the transport failed: {}", e.toString());
        }
        try {
            store.close();
        } catch (RuntimeException e) {
            LOG.warn("closing the store failed: {}", e.toString());
        }
        engines.close();
        tracing.close();
    }
}
