package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.JoinedUnitOfWork;
import dev.idemkit.adapters.rabbit.RabbitAdoptedDeliveries;
import dev.idemkit.domain.ConsumerName;
import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.Jitter;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.testsupport.KillPoint;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.support.AmqpHeaders;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Import;
import org.springframework.context.event.EventListener;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * A Spring Boot service with one idempotent {@code @RabbitListener} crediting accounts, run as a JVM of its own by
 * {@link SpringListenerCrashIT} and SIGKILLed from outside at a named point of the listener's settle path:
 * <ul>
 *   <li>{@code INSIDE_EFFECT}: the listener's UPDATE ran in its transaction, nothing is committed;</li>
 *   <li>{@code AFTER_COMMIT_BEFORE_ACK}: key and credit committed; the container has not acknowledged yet (the flow's
 *       decided hook, which runs before the listener returns to its container);</li>
 *   <li>{@code RETRY_REPUBLISHED_BEFORE_ACK}: a failed attempt's retry copy is confirmed in its bucket; the original is
 *       not acknowledged.</li>
 * </ul>
 * The {@code n}-th time the armed point ({@code -Didemkit.crash.point}, {@code -Didemkit.crash.hit}) is reached, the
 * thread prints {@code CRASH-POINT <point>} and parks for good, holding what it holds, until the kill. A body
 * {@code once:<account>:<amount>} fails its first attempt (a marker row, committed on its own, says it did).
 * With {@code --crash.batch=true} the listener is a batch listener (Spring AMQP consumer batching), the same points on
 * the batch flow. {@code -Didemkit.crash.broken=async-commit} is the deliberately broken build: the effect's transaction commits on
 * another thread after the listener returned, so the container acknowledges before the commit.
 */
@SpringBootConfiguration
@EnableAutoConfiguration(excludeName = {
        "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
        "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration"})
@Import({SpringCrashChild.Listener.class, SpringCrashChild.BatchListener.class})
public class SpringCrashChild {
    static final String INSIDE_EFFECT = "INSIDE_EFFECT";
    static final String AFTER_COMMIT_BEFORE_ACK = "AFTER_COMMIT_BEFORE_ACK";
    static final String RETRY_REPUBLISHED_BEFORE_ACK = "RETRY_REPUBLISHED_BEFORE_ACK";
    static final Set<String> POINTS = Set.of(INSIDE_EFFECT, AFTER_COMMIT_BEFORE_ACK, RETRY_REPUBLISHED_BEFORE_ACK);

    private static final String ARMED = System.getProperty("idemkit.crash.point", "");
    private static final int HIT = Integer.getInteger("idemkit.crash.hit", 1);
    private static final AtomicInteger REACHED = new AtomicInteger();
    private static final PrintStream OUT = System.out;

    public static void main(String[] args) {
        SpringApplication app = new SpringApplication(SpringCrashChild.class);
        app.setBannerMode(org.springframework.boot.Banner.Mode.OFF);
        app.run(args);
    }

    /** The thread reached {@code point}: stops it there for good if this is the armed hit. */
    static void reached(String point) {
        if (!point.equals(ARMED) || REACHED.incrementAndGet() != HIT) {
            return;
        }
        KillPoint.stopHere(point);
    }

    @EventListener(ApplicationReadyEvent.class)
    void ready() {
        synchronized (OUT) {
            OUT.println("READY");
            OUT.flush();
        }
    }

    @Bean
    Queue crashQueue(@Value("${crash.queue}") String name) {
        return new Queue(name, true, false, false, RabbitAdoptedDeliveries.workQueueArguments(name));
    }

    /** The flow's decided hook: after the commit (processed) or the retry copy's confirm, before the container acks. */
    @Bean
    ConsumerEvents crashPoints() {
        return (consumer, decision, latency) -> {
            if (decision == ConsumerEvents.Decision.PROCESSED) {
                reached(AFTER_COMMIT_BEFORE_ACK);
            } else if (decision == ConsumerEvents.Decision.RETRIED) {
                reached(RETRY_REPUBLISHED_BEFORE_ACK);
            }
        };
    }

    /** The deliberately broken build's advice (see the class comment); the starter's own otherwise. */
    @Bean
    @Conditional(Broken.class)
    IdempotentListenerAdvice brokenAdvice(DataSource dataSource, PlatformTransactionManager transactionManager,
            RabbitAdoptedDeliveries deliveries, ConsumerEvents crashPoints) {
        ListenerInbox inbox = new ListenerInbox(dataSource, transactionManager);
        InboxStore<JoinedUnitOfWork> asyncCommit = CrashChildren.asyncCommit(inbox);
        RetryPolicy policy = RetryPolicy.defaults().withBackoff(Backoff.exponential(Duration.ofMillis(50),
                Duration.ofMillis(200), Jitter.FULL));
        return new IdempotentListenerAdvice(asyncCommit, deliveries, policy, Set.of(), () -> 0.5, Clock.system(),
                crashPoints);
    }

    /** Whether the broken build was asked for. */
    static final class Broken implements org.springframework.context.annotation.Condition {
        @Override
        public boolean matches(org.springframework.context.annotation.ConditionContext context,
                org.springframework.core.type.AnnotatedTypeMetadata metadata) {
            return "async-commit".equals(System.getProperty("idemkit.crash.broken"));
        }
    }

    /**
     * A marker committed on its own connection: true the first time for {@code messageId}, whatever happens next (the
     * listeners' "once:" rule).
     */
    static boolean firstFailure(DataSource dataSource, String messageId) throws SQLException {
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps = c.prepareStatement(
                        "INSERT INTO failed_once (id) VALUES (?) ON CONFLICT DO NOTHING")) {
            c.setAutoCommit(true);
            ps.setString(1, messageId);
            return ps.executeUpdate() == 1;
        }
    }

    /** The batch mode's listener ({@code --crash.batch=true}, with Spring AMQP's consumer batching): the same credits. */
    @org.springframework.boot.autoconfigure.condition.ConditionalOnProperty(name = "crash.batch", havingValue = "true")
    static class BatchListener {
        private final JdbcTemplate jdbc;
        private final DataSource dataSource;

        BatchListener(JdbcTemplate jdbc, DataSource dataSource) {
            this.jdbc = jdbc;
            this.dataSource = dataSource;
        }

        @RabbitListener(id = "crash", queues = "${crash.queue}", batch = "true")
        public void onCredits(java.util.List<org.springframework.amqp.core.Message> messages) throws SQLException {
            // a call with one message is the single-message pass (or a batch of one)
            boolean single = messages.size() == 1;
            for (org.springframework.amqp.core.Message m : messages) {
                String body = new String(m.getBody(), java.nio.charset.StandardCharsets.UTF_8);
                String[] parts = body.split(":");
                if (parts[0].equals("once")) {
                    // fails every batch it is in until it failed once on its own, so that its batch goes message by
                    // message and it is retried like in the single mode, once (a rule counting calls instead would
                    // charge it the batches that a message before it failed, and dead-letter it in the end)
                    String id = m.getMessageProperties().getMessageId();
                    if (single ? firstFailure(dataSource, id) : !failedAlone(id)) {
                        throw new IllegalStateException("a once: message fails until it failed once on its own");
                    }
                    parts = new String[] {parts[1], parts[2]};
                }
                jdbc.update("UPDATE accounts SET balance = balance + ? WHERE id = ?", Long.parseLong(parts[1]),
                        parts[0]);
            }
            reached(INSIDE_EFFECT);
        }

        private boolean failedAlone(String messageId) throws SQLException {
            try (Connection c = dataSource.getConnection();
                    PreparedStatement ps = c.prepareStatement("SELECT 1 FROM failed_once WHERE id = ?")) {
                ps.setString(1, messageId);
                try (java.sql.ResultSet rs = ps.executeQuery()) {
                    return rs.next();
                }
            }
        }
    }

    /** The service's listener: it knows nothing of idemkit. */
    @org.springframework.boot.autoconfigure.condition.ConditionalOnProperty(name = "crash.batch", havingValue = "false",
            matchIfMissing = true)
    static class Listener {
        private final JdbcTemplate jdbc;
        private final DataSource dataSource;

        Listener(JdbcTemplate jdbc, DataSource dataSource) {
            this.jdbc = jdbc;
            this.dataSource = dataSource;
        }

        @RabbitListener(id = "crash", queues = "${crash.queue}")
        public void onCredit(String body, @Header(name = AmqpHeaders.MESSAGE_ID, required = false) String messageId)
                throws SQLException {
            String[] parts = body.split(":");
            if (parts[0].equals("once")) {
                if (firstFailure(dataSource, messageId)) {
                    throw new IllegalStateException("the first attempt of " + messageId + " fails");
                }
                parts = new String[] {parts[1], parts[2]};
            }
            jdbc.update("UPDATE accounts SET balance = balance + ? WHERE id = ?", Long.parseLong(parts[1]), parts[0]);
            reached(INSIDE_EFFECT);
        }
    }
}
