package dev.idemkit.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.app.consumers.AccountCredit;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.builder.RouteBuilder;
import org.apache.camel.component.springrabbit.SpringRabbitMQComponent;
import org.apache.camel.component.springrabbit.SpringRabbitMQConstants;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.model.ProcessorDefinition;
import org.apache.camel.model.RouteDefinition;
import org.apache.camel.processor.idempotent.jdbc.JdbcMessageIdRepository;
import org.apache.camel.spi.CamelEvent;
import org.apache.camel.spring.spi.SpringTransactionPolicy;
import org.apache.camel.support.EventNotifierSupport;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * Apache Camel's Idempotent Consumer EIP as its documentation sets it up, draining one of the run's pre-filled
 * queues into the same credit as idemkit: {@code spring-rabbitmq} consumer (Spring AMQP, ack after the exchange
 * completes), {@code idempotentConsumer} keyed on the AMQP {@code message-id} with {@link JdbcMessageIdRepository}
 * (its own table {@code CAMEL_MESSAGEPROCESSED}, created by the repository, primary key (processorName, messageId)
 * since Camel 4), then {@code UPDATE accounts} through Spring's {@link JdbcTemplate}.
 *
 * <ul>
 *   <li>{@link Mode#DEFAULT}: the EIP's defaults ({@code eager=true}, {@code removeOnFailure=true}), no route
 *       transaction. The key is committed in the repository's own transaction before the credit runs, and the credit
 *       commits on its own: a crash between the two loses the credit. The documentation's example.</li>
 *   <li>{@link Mode#TRANSACTED}: the correct configuration for an effect in the same database: the route is
 *       {@code transacted()} with a Spring {@link DataSourceTransactionManager} on the one pool, so the repository's
 *       insert (its {@code TransactionTemplate} joins with {@code PROPAGATION_REQUIRED}) and the credit commit
 *       together, before Spring AMQP acks.</li>
 * </ul>
 * Everything else is Camel's and Spring AMQP's default: a failed exchange is retried in the consumer
 * ({@code maximumRetryAttempts=5}, {@code retryDelay=1000} ms), then rejected without requeue (the queue's
 * dead-letter exchange takes it). The prefetch is the run's, the same for every peer and idemkit.
 */
final class CamelPeer implements AutoCloseable {
    enum Mode {
        DEFAULT("camel-default"), TRANSACTED("camel-transacted");

        final String label;

        Mode(String label) {
            this.label = label;
        }

        /** The peer named {@code label}; an error naming the known ones otherwise. */
        static Mode of(String label) {
            for (Mode m : values()) {
                if (m.label.equals(label)) {
                    return m;
                }
            }
            throw new IllegalArgumentException("unknown peer '" + label + "'; known: "
                    + java.util.Arrays.stream(values()).map(m -> m.label).toList());
        }
    }

    private final HikariDataSource pool;
    private final CachingConnectionFactory rabbit;

    /** One pool and one Spring AMQP connection for every route of the run. */
    CamelPeer(BenchDatabase db, URI rabbitUri, int maxConsumers) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(db.url());
        c.setUsername(db.user());
        c.setPassword(db.password());
        c.setSchema(db.schema());
        c.setMaximumPoolSize(maxConsumers + 2);
        c.setPoolName("camel-peer");
        this.pool = new HikariDataSource(c);
        this.rabbit = new CachingConnectionFactory(rabbitUri);
        this.rabbit.setConnectionNameStrategy(f -> "idemkit-bench-camel-peer");
    }

    /**
     * Drains {@code queue} with a Camel route in {@code mode} at {@code consumers} consumers: from starting the route
     * until {@code expected} deliveries have ended (an exchange completed, so acked, or the delivery rejected after
     * its retries into the queue's dead-letter queue, {@code <queue>.dlq}), or {@code limit}. Camel's start-up is not
     * timed.
     */
    Result drain(Mode mode, String queue, String processorName, int consumers, int prefetch, int expected,
            Duration limit) throws Exception {
        AtomicLong completed = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        try (CamelContext camel = context(mode, queue, processorName, consumers, prefetch, completed, failed)) {
            long began = System.nanoTime();
            camel.getRouteController().startRoute(processorName);
            long deadline = began + limit.toNanos();
            long rejected = 0;
            for (int tick = 0; completed.get() + rejected < expected && System.nanoTime() < deadline; tick++) {
                Thread.sleep(1);
                if (tick % 50 == 49) {
                    rejected = deadLettered(queue);
                }
            }
            double seconds = (System.nanoTime() - began) / 1e9;
            rejected = deadLettered(queue);
            long done = completed.get() + rejected;
            camel.getRouteController().stopRoute(processorName);
            return new Result(new Drain(done, completed.get(), seconds, done >= expected), failed.get(), rejected);
        }
    }

    /**
     * A started Camel context holding the route (not started: its id is {@code processorName}), counting exchanges
     * completed and failed at their end.
     */
    CamelContext context(Mode mode, String queue, String processorName, int consumers, int prefetch,
            AtomicLong completed, AtomicLong failed) throws Exception {
        CamelContext camel = new DefaultCamelContext();
        SpringRabbitMQComponent component = new SpringRabbitMQComponent();
        component.setConnectionFactory(rabbit);
        camel.addComponent("spring-rabbitmq", component);
        camel.getManagementStrategy().addEventNotifier(new Settled(completed, failed));
        JdbcMessageIdRepository repository = new JdbcMessageIdRepository(pool, processorName);
        if (mode == Mode.TRANSACTED) {
            camel.getRegistry().bind("tx", new SpringTransactionPolicy(new DataSourceTransactionManager(pool)));
        }
        JdbcTemplate jdbc = new JdbcTemplate(pool);
        camel.addRoutes(new RouteBuilder() {
            @Override
            public void configure() {
                RouteDefinition route = from("spring-rabbitmq:default?queues=" + queue
                        + "&autoDeclare=false&concurrentConsumers=" + consumers + "&maxConcurrentConsumers="
                        + consumers + "&prefetchCount=" + prefetch)
                        .routeId(processorName).autoStartup(false);
                ProcessorDefinition<?> body = mode == Mode.TRANSACTED ? route.transacted("tx") : route;
                body.idempotentConsumer(header(SpringRabbitMQConstants.MESSAGE_ID), repository)
                        .process(e -> credit(jdbc, e))
                        .end();
            }
        });
        camel.getShutdownStrategy().setTimeout(10);
        camel.getShutdownStrategy().setTimeUnit(TimeUnit.SECONDS);
        camel.start();
        return camel;
    }

    /** Messages in the queue's dead-letter queue (idemkit's topology: {@code <queue>.dlq}). */
    long deadLettered(String queue) throws Exception {
        try (var connection = rabbit.createConnection(); var channel = connection.createChannel(false)) {
            return channel.queueDeclarePassive(queue + ".dlq").getMessageCount();
        }
    }

    private static void credit(JdbcTemplate jdbc, Exchange e) throws Exception {
        AccountCredit credit = AccountCredit.parse(e.getMessage().getMandatoryBody(byte[].class));
        jdbc.update(BenchDatabase.UPDATE, credit.amount(), credit.accountId());
    }

    /**
     * @param failedAttempts exchanges that ended failed (Spring AMQP's retry in the consumer makes a new exchange per
     *     attempt, so one delivery can count several times)
     * @param rejected deliveries rejected after their retries, found in the queue's dead-letter queue
     */
    record Result(Drain drain, long failedAttempts, long rejected) {}

    @Override
    public void close() {
        rabbit.destroy();
        pool.close();
    }

    /** Counts exchanges at their end, after the route's transaction (if any) is over. */
    private static final class Settled extends EventNotifierSupport {
        private final AtomicLong completed;
        private final AtomicLong failed;

        Settled(AtomicLong completed, AtomicLong failed) {
            this.completed = completed;
            this.failed = failed;
            setIgnoreCamelContextEvents(true);
            setIgnoreRouteEvents(true);
            setIgnoreServiceEvents(true);
            setIgnoreExchangeCreatedEvent(true);
            setIgnoreExchangeSendingEvents(true);
            setIgnoreExchangeSentEvents(true);
            setIgnoreExchangeRedeliveryEvents(true);
            setIgnoreStepEvents(true);
        }

        @Override
        public void notify(CamelEvent event) {
            if (event instanceof CamelEvent.ExchangeFailedEvent) {
                failed.incrementAndGet();
            } else if (event instanceof CamelEvent.ExchangeCompletedEvent) {
                completed.incrementAndGet();
            }
        }
    }
}
