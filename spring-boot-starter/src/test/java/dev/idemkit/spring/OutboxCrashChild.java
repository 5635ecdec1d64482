package dev.idemkit.spring;

import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import dev.idemkit.spring.outboxsample.OrderService;
import dev.idemkit.spring.outboxsample.Orders;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The outbox sample service ({@link OrderService}: orders and their events, the starter's relay, the idempotent
 * listener consuming them) in a JVM of its own, for {@link SpringOutboxCrashIT}, SIGKILLed from outside at a named point
 * of the relay's path, armed as {@link SpringCrashChild}'s points are ({@code -Didemkit.crash.point},
 * {@code -Didemkit.crash.hit}):
 * <ul>
 *   <li>{@code COMMITTED_BEFORE_PUBLISH}: an order and its event committed, the relay about to publish it;</li>
 *   <li>{@code PUBLISHED_BEFORE_MARK}: the broker confirmed the event, the relay has not recorded it sent.</li>
 * </ul>
 * The starter's own transport is wrapped (a bean post-processor on {@code idemkitOutboxTransport}) to stop there. On
 * start it places {@code --crash.place} orders ({@code <crash.run>-<i>}), each in a transaction of its own, and pays
 * every second one. {@code -Didemkit.crash.broken=dual-write} is the deliberately broken build a service writes without
 * an outbox: it publishes the event itself with {@code RabbitTemplate} after its commit, and the same point is between
 * its commit and that publish.
 */
@Configuration(proxyBeanMethods = false)
public class OutboxCrashChild {
    static final String COMMITTED_BEFORE_PUBLISH = "COMMITTED_BEFORE_PUBLISH";
    static final String PUBLISHED_BEFORE_MARK = "PUBLISHED_BEFORE_MARK";
    private static final boolean DUAL_WRITE = "dual-write".equals(System.getProperty("idemkit.crash.broken"));
    private static final PrintStream OUT = System.out;

    public static void main(String[] args) {
        SpringApplication app = new SpringApplication(OrderService.class, OutboxCrashChild.class, DualWrite.class);
        app.setBannerMode(org.springframework.boot.Banner.Mode.OFF);
        app.run(args);
    }

    /** The starter's relay transport, stopped at the armed point (not in the dual-write build: it has no relay). */
    @Bean
    static BeanPostProcessor crashProbes() {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String name) {
                return bean instanceof MessageTransport t && name.equals("idemkitOutboxTransport") ? new Probed(t) : bean;
            }
        };
    }

    @EventListener(ApplicationReadyEvent.class)
    void ready(ApplicationReadyEvent event) {
        synchronized (OUT) {
            OUT.println("READY");
            OUT.flush();
        }
        var env = event.getApplicationContext().getEnvironment();
        int place = env.getProperty("crash.place", Integer.class, 0);
        String run = env.getProperty("crash.run", "run");
        Orders orders = event.getApplicationContext().getBean(Orders.class);
        DualWrite dualWrite = event.getApplicationContext().getBean(DualWrite.class);
        Thread placer = new Thread(() -> {
            for (int i = 0; i < place; i++) {
                String id = run + "-" + i;
                if (DUAL_WRITE) {
                    dualWrite.place(id, 1);
                } else {
                    orders.place(id, 1);
                    if (i % 2 == 0) {
                        orders.pay(id);
                    }
                }
            }
            synchronized (OUT) {
                OUT.println("PLACED " + place);
                OUT.flush();
            }
        }, "crash-placer");
        placer.setDaemon(true);
        placer.start();
    }

    /** On a graceful stop: how many deliveries the listener's inbox absorbed as duplicates in this run. */
    @EventListener(org.springframework.context.event.ContextClosedEvent.class)
    void stopped(org.springframework.context.event.ContextClosedEvent event) {
        double duplicates = event.getApplicationContext().getBean(io.micrometer.core.instrument.MeterRegistry.class)
                .find(MicrometerInboxMeters.DELIVERIES).tag("outcome", "duplicate").counters().stream()
                .mapToDouble(io.micrometer.core.instrument.Counter::count).sum();
        synchronized (OUT) {
            OUT.println("DUPLICATES " + (long) duplicates);
            OUT.flush();
        }
    }

    /** Through the port: the point before each publish, and after each confirm before the relay records it. */
    static final class Probed implements MessageTransport {
        private final MessageTransport delegate;

        Probed(MessageTransport delegate) {
            this.delegate = delegate;
        }

        @Override
        public CompletableFuture<Void> publishAsync(String queue, OutgoingMessage message) {
            SpringCrashChild.reached(COMMITTED_BEFORE_PUBLISH);
            return delegate.publishAsync(queue, message).thenApply(confirmed -> {
                SpringCrashChild.reached(PUBLISHED_BEFORE_MARK);
                return confirmed;
            });
        }

        @Override
        public void publish(String queue, OutgoingMessage message) {
            publishAsync(queue, message).join();
        }

        @Override
        public Subscription subscribe(String queue, DeliveryHandler handler) {
            return delegate.subscribe(queue, handler);
        }

        @Override
        public String health() {
            return delegate.health();
        }

        @Override
        public void close() {
            delegate.close();
        }
    }

    /** The broken build's order placement: the order in a transaction, its event published after the commit. */
    @Component
    public static class DualWrite {
        private final JdbcTemplate jdbc;
        private final RabbitTemplate rabbit;
        private final String queue;

        public DualWrite(JdbcTemplate jdbc, RabbitTemplate rabbit, @Value("${orders.queue}") String queue) {
            this.jdbc = jdbc;
            this.rabbit = rabbit;
            this.queue = queue;
        }

        @Transactional
        public void place(String orderId, long total) {
            jdbc.update("INSERT INTO orders (id, total) VALUES (?, ?)", orderId, total);
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void afterCommit() {
                    SpringCrashChild.reached(COMMITTED_BEFORE_PUBLISH);
                    rabbit.send("", queue, MessageBuilder.withBody(("placed:" + orderId)
                            .getBytes(StandardCharsets.UTF_8)).setMessageId(UUID.randomUUID().toString())
                            .setHeader(IdemkitOutbox.EVENT_TYPE_HEADER, "order-placed").build());
                }
            });
        }
    }
}
