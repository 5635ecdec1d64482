package dev.idemkit.adapters.rabbit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.memory.InMemoryCounter;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.ConsumerEvents.Decision;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.testsupport.RabbitCluster;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A memory alarm on a private RabbitMQ node ({@code rabbitmqctl set_vm_memory_high_watermark 0}, never the machine's
 * broker) blocks every publish mid-stream, for longer than the confirm timeout and the settle patience, while
 * messages that fail once need their retry copies published. The transport must stop taking work, report DOWN, and
 * lose nothing, apply nothing twice, publish no extra retry copy and dead-letter no healthy message.
 *
 * <p>Before the fix (the settle publish timed out under the alarm and was tried again, the delivery given back after
 * its patience), every blocked try left one more retry copy on the broker, and on a quorum queue each give-back counted
 * against the delivery limit: healthy messages ended in the DLQ.
 */
class ResourceAlarmIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MESSAGES = 90;
    private static final int CONSUMERS = 2;
    private static final Duration ALARM = Duration.ofSeconds(9);
    private static RabbitCluster broker;

    @BeforeAll
    static void startPrivateNode() throws Exception {
        Assumptions.assumeTrue(RabbitCluster.available(), "no rabbitmq-server scripts on this machine");
        broker = RabbitCluster.start(1);
    }

    @AfterAll
    static void stopPrivateNode() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void underAResourceAlarmNothingIsLostAppliedTwiceOrDeadLettered() throws Exception {
        Duration patience = RabbitDelivery.settlePatience;
        RabbitDelivery.settlePatience = Duration.ofSeconds(2); // far shorter than the alarm
        String queue = RabbitFixtures.anyQueue("alarm");
        RabbitSettings settings = RabbitFixtures.settings().withUri(URI.create(broker.uri(1))).withConsumers(CONSUMERS)
                .withPrefetch(5).withConfirmTimeout(Duration.ofMillis(500)).withDeliveryLimit(1);
        InMemoryCounter effects = new InMemoryCounter();
        Set<String> failedOnce = ConcurrentHashMap.newKeySet();
        AtomicInteger calls = new AtomicInteger();
        Consumers consumers = new Consumers();
        SoftAssertions soft = new SoftAssertions();
        try (RabbitMessageTransport transport = new RabbitMessageTransport(settings, Clock.system(),
                RabbitFixtures.anyConnectionName("alarm"))) {
            for (int i = 0; i < MESSAGES; i++) {
                transport.publish(queue, OutgoingMessage.of("m-" + i, ("n=" + i).getBytes(StandardCharsets.UTF_8)));
            }
            ThreadLocal<Integer> attempt = new ThreadLocal<>();
            DeliveryHandler runtime = consumers.runtime((message, work) -> {
                calls.incrementAndGet();
                int n = Integer.parseInt(message.rawId().substring(2));
                if (n % 3 == 0 && attempt.get() == 1) { // its first attempt, as its headers count them
                    failedOnce.add(message.rawId());
                    throw new IllegalStateException("fails its first attempt"); // its retry copy must be published
                }
                effects.add(work, message.rawId(), 1);
                Thread.sleep(100); // the stream lasts past the alarm's start (rabbitmqctl takes a second or two)
            });
            try (var subscription = transport.subscribe(queue, d -> {
                attempt.set(d.attempt());
                runtime.onDelivery(d);
            })) {
                Eventually.await(Duration.ofSeconds(30), "a fifth of the stream processed",
                        () -> consumers.count(Decision.PROCESSED) >= MESSAGES / 5);

                broker.ctl(1, "set_vm_memory_high_watermark", "0");
                try {
                    boolean down = within(Duration.ofSeconds(10), () -> !"UP".equals(transport.health()));
                    soft.assertThat(down).as("health DOWN while the broker blocks publishing").isTrue();
                    String whileBlocked = transport.health();
                    int callsWhenDown = calls.get();
                    Eventually.pause(ALARM.toMillis()); // the alarm lasts: many confirm timeouts and patiences
                    soft.assertThat(calls.get() - callsWhenDown)
                            .as("handler calls begun while blocked (health said \"%s\")", whileBlocked)
                            .isLessThanOrEqualTo(CONSUMERS);
                } finally {
                    broker.ctl(1, "set_vm_memory_high_watermark", "0.4");
                }

                Eventually.await(Duration.ofSeconds(60), "every message processed after the alarm",
                        () -> consumers.count(Decision.PROCESSED) + transport.deadLetterQueue().depth(queue)
                                >= MESSAGES);
                Eventually.await(Duration.ofSeconds(60), "the work queue, its retry buckets and hold queue empty (no copy left to deliver)",
                        () -> messagesIn(queue) == 0);
                soft.assertThat(within(Duration.ofSeconds(10), () -> "UP".equals(transport.health())))
                        .as("health UP again after the alarm (it says \"%s\")", transport.health()).isTrue();
            }
            long lost = 0;
            long twice = 0;
            for (int i = 0; i < MESSAGES; i++) {
                long applied = effects.read("m-" + i);
                lost += applied == 0 ? 1 : 0;
                twice += applied > 1 ? 1 : 0;
            }
            soft.assertThat(lost).as("messages whose effect was never applied").isZero();
            soft.assertThat(twice).as("messages whose effect was applied twice").isZero();
            soft.assertThat(consumers.count(Decision.DUPLICATE))
                    .as("extra copies delivered (a retry copy published more than once)").isZero();
            soft.assertThat(transport.deadLetterQueue().depth(queue)).as("healthy messages dead-lettered").isZero();
            soft.assertThat(consumers.count(Decision.RETRIED)).as("retries: one per message that fails its first attempt")
                    .isEqualTo(MESSAGES / 3);
            soft.assertThat(failedOnce).as("messages that failed their first attempt").hasSize(MESSAGES / 3);
            transport.deleteTopology(queue);
        } finally {
            RabbitDelivery.settlePatience = patience;
        }
        soft.assertAll();
    }

    /** Whether {@code condition} held within {@code bound} (a finding for the soft assertions, not a failure yet). */
    private static boolean within(Duration bound, BooleanSupplier condition) {
        try {
            Eventually.await(bound, "condition", condition);
            return true;
        } catch (AssertionError e) {
            return false;
        }
    }

    /** Ready and unacknowledged messages in {@code queue}, its retry buckets and hold queue (not its DLQ), as the node counts them. */
    private static long messagesIn(String queue) {
        try {
            long total = 0;
            for (JsonNode q : JSON.readTree(broker.ctl(1, "--formatter", "json", "list_queues", "name", "messages"))) {
                String name = q.get("name").asText();
                if (name.startsWith(queue) && !name.equals(RabbitTopology.deadLetterQueue(queue))) {
                    total += q.get("messages").asLong();
                }
            }
            return total;
        } catch (Exception e) {
            return -1;
        }
    }
}
