package dev.idemkit.spring;

import static org.awaitility.Awaitility.await;

import dev.idemkit.adapters.rabbit.RabbitAdoptedDeliveries;
import dev.idemkit.spring.sample.CreditListener;
import dev.idemkit.spring.sample.SampleService;
import dev.idemkit.testsupport.Names;
import dev.idemkit.testsupport.RabbitCluster;
import dev.idemkit.testsupport.TestPostgres;
import java.net.URI;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The sample service's idempotent {@code @RabbitListener} under a memory alarm on a private RabbitMQ node
 * ({@code rabbitmqctl set_vm_memory_high_watermark 0}, never the machine's broker). Once the broker blocks the settle
 * connection (a retry copy written during the alarm), the listeners take no more work: each delivery waits at the
 * advice's door, unacknowledged, until publishing is open; the service's health is DOWN meanwhile; afterwards every
 * credit is applied once and nothing is dead-lettered.
 *
 * <p>Before (no door), the container's other consumer went on running the listener through the alarm, with no retry
 * or dead letter publishable for what it ran: dozens of listener calls after health said DOWN.
 */
@SpringBootTest(classes = SampleService.class, webEnvironment = SpringBootTest.WebEnvironment.NONE)
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
// full tier (a private RabbitMQ node and a Boot context, 50-80 s of the README tier's budget): in verify,
// adapters-rabbit's ResourceAlarmIT holds the adopted deliveries' settle paths under an alarm (what this listener's
// retries and dead letters go through), and SpringListenerCrashIT and SampleServiceIT its exactly-once effect
@org.junit.jupiter.api.Tag("slow")
class SpringResourceAlarmIT {
    private static final String RUN = Names.tag(12);
    private static final String SCHEMA = "idemkit_spring_alarm_" + RUN;
    private static final String QUEUE = "idemkit.spring.alarm." + RUN;
    private static final int CONCURRENCY = 2;
    private static final int SLOW = 60;
    private static RabbitCluster broker;
    /** What holds connections to the private node, closed before it goes (the context itself closes after the class). */
    private static AutoCloseable service;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) throws Exception {
        Assumptions.assumeTrue(RabbitCluster.available(), "no rabbitmq-server scripts on this machine");
        broker = RabbitCluster.start(1);
        SampleServiceProperties.register(registry, SCHEMA, QUEUE, URI.create(broker.uri(1)));
        registry.add("spring.rabbitmq.listener.simple.concurrency", () -> Integer.toString(CONCURRENCY));
        registry.add("spring.rabbitmq.listener.simple.max-concurrency", () -> Integer.toString(CONCURRENCY));
        registry.add("spring.rabbitmq.listener.simple.prefetch", () -> "5");
    }

    @Autowired
    JdbcTemplate jdbc;
    @Autowired
    RabbitTemplate rabbit;
    @Autowired
    RabbitListenerEndpointRegistry listeners;
    @Autowired
    IdemkitHealthIndicator health;
    @Autowired
    RabbitAdoptedDeliveries deliveries;
    @Autowired
    org.springframework.amqp.rabbit.connection.CachingConnectionFactory connectionFactory;

    @BeforeEach
    void tables() {
        service = () -> {
            listeners.stop();
            deliveries.close();
            connectionFactory.resetConnection();
        };
        jdbc.execute("CREATE TABLE IF NOT EXISTS accounts (id text PRIMARY KEY, balance bigint NOT NULL)");
    }

    @AfterAll
    static void stopServiceThenNode() {
        if (service != null) {
            try {
                service.close(); // before the node goes: its connections close cleanly instead of recovering
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        TestPostgres.dropSchema(SCHEMA);
        if (broker != null) {
            broker.close(); // the node, its queues and data with it
        }
    }

    @Test
    void duringAnAlarmTheListenersTakeNoWorkHealthIsDownAndAfterwardsEveryCreditIsAppliedOnce() throws Exception {
        var container = listeners.getListenerContainer("credits");
        container.stop();
        long deadLettersBefore = deliveries.deadLetterQueue().depth(QUEUE);
        String flakyAccount = account();
        String slowAccount = account();
        String flaky = "flaky-" + RUN;
        send(flaky, "flaky:" + flakyAccount + ":1"); // its retry copy is what tells the settle connection it is blocked
        for (int i = 0; i < SLOW; i++) {
            send("slow-" + RUN + "-" + i, "slow:" + slowAccount + ":1");
        }
        SoftAssertions soft = new SoftAssertions();
        int callsAfterDown;
        String downDetail;
        Status statusWhileBlocked;
        long healthMillis;
        try {
            broker.setMemoryAlarm(1);
            container.start();
            soft.assertThat(within(Duration.ofSeconds(15), () -> deliveries.health().contains("blocks publishing")))
                    .as("the settle connection knows the broker blocks it").isTrue();
            int callsWhenDown = calls();
            long start = System.nanoTime();
            var whileBlocked = health.health();
            healthMillis = (System.nanoTime() - start) / 1_000_000;
            statusWhileBlocked = whileBlocked.getStatus();
            downDetail = String.valueOf(whileBlocked.getDetails().get("transport"));
            Thread.sleep(4_000); // 2 consumers at 50 ms a message would have run about 160 by now
            callsAfterDown = calls() - callsWhenDown;
        } finally {
            broker.clearMemoryAlarm(1);
        }
        soft.assertThat(statusWhileBlocked).as("the service's health while the broker blocks publishing")
                .isEqualTo(Status.DOWN);
        soft.assertThat(healthMillis).as("ms the health check took during the alarm (it must not wait on the blocked"
                + " connection)").isLessThan(5_000);
        soft.assertThat(callsAfterDown).as("listener calls begun after health said DOWN (\"%s\")", downDetail)
                .isLessThanOrEqualTo(CONCURRENCY);
        soft.assertThat(downDetail).contains("blocks publishing");
        await("every credit applied after the alarm").atMost(Duration.ofSeconds(60))
                .until(() -> balance(slowAccount) >= SLOW && balance(flakyAccount) >= 1);
        Thread.sleep(1_000); // a second application of any would show now
        soft.assertThat(balance(slowAccount)).as("slow credits applied").isEqualTo(SLOW);
        soft.assertThat(balance(flakyAccount)).as("the flaky credit, applied on its third attempt").isEqualTo(1);
        soft.assertThat(deliveries.deadLetterQueue().depth(QUEUE) - deadLettersBefore).as("messages dead-lettered")
                .isZero();
        soft.assertThat(within(Duration.ofSeconds(10), () -> health.health().getStatus().equals(Status.UP)))
                .as("health UP after the alarm (%s)", health.health().getDetails()).isTrue();
        soft.assertAll();
    }

    /**
     * A settle that cannot finish (its container stops during the alarm and interrupts the listener thread waiting for
     * the retry copy's confirm) gives the delivery back to the queue even when the service set
     * {@code default-requeue-rejected=false}. Before, the advice rethrew the settle's plain exception and the container
     * rejected the message without requeue: the broker dead-lettered a message that was never settled (here into
     * idemkit's DLQ through the work queue's dead-letter exchange; without one, it is dropped).
     */
    @Test
    void anUnsettledDeliveryGoesBackToItsQueueEvenWithDefaultRequeueRejectedFalse() throws Exception {
        var container = (org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer) listeners
                .getListenerContainer("credits");
        container.stop();
        long deadLettersBefore = deliveries.deadLetterQueue().depth(QUEUE);
        String account = account();
        String flaky = "flaky-" + RUN + "-requeue";
        send(flaky, "flaky:" + account + ":1");
        container.setDefaultRequeueRejected(false);
        container.setShutdownTimeout(1_000);
        try {
            broker.setMemoryAlarm(1);
            container.start();
            await("the settle connection knows the broker blocks it").atMost(Duration.ofSeconds(15))
                    .until(() -> deliveries.health().contains("blocks publishing"));
            container.stop(); // the flaky message's retry copy waits for its confirm: interrupted after 1 s
        } finally {
            broker.clearMemoryAlarm(1);
        }
        container.setDefaultRequeueRejected(true);
        container.setShutdownTimeout(5_000);
        container.start();
        await("the flaky credit applied after the alarm").atMost(Duration.ofSeconds(60))
                .until(() -> balance(account) >= 1);
        Thread.sleep(1_000); // a second application, or a late dead letter, would show now
        SoftAssertions soft = new SoftAssertions();
        soft.assertThat(balance(account)).as("the flaky credit").isEqualTo(1);
        soft.assertThat(deliveries.deadLetterQueue().depth(QUEUE) - deadLettersBefore)
                .as("messages dead-lettered (by the broker, after a reject without requeue)").isZero();
        soft.assertAll();
    }

    /** Listener calls for this test's messages (the sample's listener is shared with other tests in this JVM). */
    private static int calls() {
        return (int) CreditListener.CALLS.stream().filter(id -> id.contains(RUN)).count();
    }

    private String account() {
        return SampleAccounts.account(jdbc);
    }

    private long balance(String account) {
        return SampleAccounts.balance(jdbc, account);
    }

    private void send(String messageId, String body) {
        SampleAccounts.send(rabbit, QUEUE, messageId, body);
    }

    /** Whether {@code condition} held within {@code bound} (a finding for the soft assertions, not a failure yet). */
    private static boolean within(Duration bound, BooleanSupplier condition) {
        try {
            await().atMost(bound).pollInterval(Duration.ofMillis(50)).until(condition::getAsBoolean);
            return true;
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            return false;
        }
    }
}
