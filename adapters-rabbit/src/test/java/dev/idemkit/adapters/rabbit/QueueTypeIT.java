package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.testsupport.TestRabbit.BrokerQueue;
import dev.idemkit.adapters.rabbit.RabbitSettings.QueueType;
import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.DeadLetterEntry;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.TopologyMismatchException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What the broker holds after idemkit declared a topology, read back with {@code rabbitmqctl list_queues} (a
 * successful declare proves nothing: RabbitMQ accepts at-least-once dead-lettering without reject-publish and silently
 * falls back to at-most-once); an existing queue with other arguments refused with one message; the delivery limit
 * as the safety net under a consumer that dies holding a message. Both queue types, whatever the environment says.
 */
class QueueTypeIT {
    private final List<RabbitMessageTransport> transports = new ArrayList<>();
    private final List<String> queues = new ArrayList<>();

    @AfterEach
    void cleanUp() {
        RabbitMessageTransport any = transport(QueueType.CLASSIC, 20);
        queues.forEach(any::deleteTopology);
        transports.forEach(t -> {
            try {
                t.close();
            } catch (RuntimeException e) {
                // an aborted transport
            }
        });
    }

    private RabbitMessageTransport transport(QueueType type, int deliveryLimit) {
        RabbitMessageTransport t = new RabbitMessageTransport(RabbitFixtures.settings().withQueueType(type)
                .withDeliveryLimit(deliveryLimit), Clock.system(), RabbitFixtures.anyConnectionName("types"));
        transports.add(t);
        return t;
    }

    private String queue(String purpose) {
        String q = RabbitFixtures.anyQueue(purpose);
        queues.add(q);
        return q;
    }

    @Test
    void everyQueueOfAQuorumTopologyIsAQuorumQueueAndDeadLettersAtLeastOnce() throws Exception {
        String q = queue("quorum");
        transport(QueueType.QUORUM, 20).declare(q);

        Map<String, BrokerQueue> held = RabbitFixtures.brokerQueues(q);
        assertThat(held).containsOnlyKeys(q, q + ".dlq", q + ".dlq.hold", q + ".retry.1s", q + ".retry.2s");
        held.forEach((name, bq) -> assertThat(bq.type()).as(name).isEqualTo("quorum"));
        for (String dlSource : List.of(q, q + ".dlq.hold", q + ".retry.1s", q + ".retry.2s")) {
            assertThat(held.get(dlSource).arguments()).as(dlSource)
                    .containsEntry("x-dead-letter-strategy", "at-least-once")
                    .containsEntry("x-overflow", "reject-publish");
        }
        assertThat(held.get(q).arguments()).containsEntry("x-delivery-limit", 20L)
                .containsEntry("x-dead-letter-exchange", q + ".dlx").containsEntry("x-dead-letter-routing-key", q + ".dlq");
        assertThat(held.get(q + ".dlq").arguments()).as("a dead letter neither expires nor is dropped")
                .containsOnlyKeys("x-queue-type");
        assertThat(held.get(q + ".retry.2s").arguments()).containsEntry("x-message-ttl", 2000L)
                .containsEntry("x-dead-letter-exchange", "").containsEntry("x-dead-letter-routing-key", q);
    }

    @Test
    void aClassicTopologyIsClassicAndOneDeclaredBeforeQuorumSupportIsAcceptedAsItIs() throws Exception {
        String q = queue("classic");
        transport(QueueType.CLASSIC, 20).declare(q);

        Map<String, BrokerQueue> held = RabbitFixtures.brokerQueues(q);
        held.forEach((name, bq) -> assertThat(bq.type()).as(name).isEqualTo("classic"));
        assertThat(held.get(q).arguments()).isEqualTo(Map.of("x-queue-type", "classic",
                "x-dead-letter-exchange", q + ".dlx", "x-dead-letter-routing-key", q + ".dlq"));
        assertThat(held.get(q + ".dlq").arguments()).isEqualTo(Map.of("x-queue-type", "classic"));

        // the topology as idemkit declared it before quorum support: no x-queue-type anywhere
        String old = queue("classic-old");
        try (var raw = RabbitFixtures.rawConnection(); var ch = raw.createChannel()) {
            ch.exchangeDeclare(old + ".dlx", com.rabbitmq.client.BuiltinExchangeType.DIRECT, true);
            ch.queueDeclare(old + ".dlq", true, false, false, Map.of());
            ch.queueBind(old + ".dlq", old + ".dlx", old + ".dlq");
            ch.queueDeclare(old + ".dlq.hold", true, false, false, Map.of("x-message-ttl", 0,
                    "x-dead-letter-exchange", old + ".dlx", "x-dead-letter-routing-key", old + ".dlq"));
            ch.queueDeclare(old, true, false, false, Map.of("x-dead-letter-exchange", old + ".dlx",
                    "x-dead-letter-routing-key", old + ".dlq"));
            for (int b : List.of(1, 2)) {
                ch.queueDeclare(old + ".retry." + b + "s", true, false, false, Map.of("x-message-ttl", b * 1000,
                        "x-dead-letter-exchange", "", "x-dead-letter-routing-key", old));
            }
        }
        Map<String, BrokerQueue> before = RabbitFixtures.brokerQueues(old);
        transport(QueueType.CLASSIC, 20).declare(old);
        assertThat(RabbitFixtures.brokerQueues(old)).isEqualTo(before);
    }

    @Test
    void anExistingClassicTopologyIsRefusedWithOneMessageNamingEveryDifferenceAndLeftAsItWas() throws Exception {
        String q = queue("mismatch");
        RabbitMessageTransport classic = transport(QueueType.CLASSIC, 20);
        classic.declare(q);
        classic.publish(q, OutgoingMessage.of("kept", "still here".getBytes(StandardCharsets.UTF_8)));
        Map<String, BrokerQueue> before = RabbitFixtures.brokerQueues(q);

        RabbitMessageTransport quorum = transport(QueueType.QUORUM, 20);
        for (int attempt = 0; attempt < 2; attempt++) { // the second attempt refuses the same way: no state kept
            assertThatThrownBy(() -> quorum.declare(q))
                    .isInstanceOf(TopologyMismatchException.class)
                    .hasMessageContaining("queue '" + q + "' has ")
                    .hasMessageContaining("x-queue-type 'classic' where the settings want 'quorum'")
                    // once the type differs RabbitMQ compares only what a classic queue knows: not the delivery limit
                    // nor the dead-letter strategy
                    .hasMessageContaining("x-overflow none where the settings want 'reject-publish'")
                    .hasMessageContaining("queue '" + q + ".dlq' has x-queue-type 'classic'")
                    .hasMessageContaining("queue '" + q + ".dlq.hold' has x-queue-type 'classic'")
                    .hasMessageContaining("IDEMKIT_RABBIT_QUEUE_TYPE")
                    .satisfies(e -> assertThat(((TopologyMismatchException) e).queue()).isEqualTo(q));
        }
        assertThatThrownBy(() -> quorum.subscribe(q, d -> d.ack())).isInstanceOf(TopologyMismatchException.class);
        assertThatThrownBy(() -> quorum.publish(q, OutgoingMessage.of("x", new byte[1])))
                .isInstanceOf(TopologyMismatchException.class);

        assertThat(RabbitFixtures.brokerQueues(q)).as("nothing changed on the broker").isEqualTo(before);
        String other = queue("mismatch-other");
        quorum.publish(other, OutgoingMessage.of("y", new byte[1])); // the connection is fine
        try (var raw = RabbitFixtures.rawConnection()) {
            assertThat(RabbitFixtures.messageCount(raw, q)).as("the classic queue's message").isEqualTo(1);
            assertThat(RabbitFixtures.messageCount(raw, other)).isEqualTo(1);
        }
    }

    @Test
    void aReadOfAQuorumDeadLetterQueueLeavesItsDepthAsItWas() throws Exception {
        String q = queue("peek-depth");
        RabbitMessageTransport t = transport(QueueType.QUORUM, 20);
        t.declare(q);
        try (var raw = RabbitFixtures.rawConnection(); var ch = raw.createChannel()) {
            ch.confirmSelect();
            for (int i = 0; i < 5; i++) {
                ch.basicPublish("", q + ".dlq", new com.rabbitmq.client.AMQP.BasicProperties.Builder()
                        .messageId("dl-" + i).deliveryMode(2).build(), new byte[] {'x'});
            }
            ch.waitForConfirmsOrDie(5_000);
        }
        RabbitDeadLetterQueue dlq = t.deadLetterQueue();
        Eventually.await(Duration.ofSeconds(10), "five dead letters", () -> dlq.depth(q) == 5);
        for (int round = 0; round < 30; round++) {
            assertThat(dlq.peek(q, 10)).hasSize(5);
            // a quorum queue takes the read messages back asynchronously: the read waits for that
            assertThat(dlq.depth(q)).as("depth right after read %d", round).isEqualTo(5);
        }
    }

    @Test
    void aRetryBucketOfAnotherTypeDeadLettersTheMessageSayingWhyInsteadOfLooping() throws Exception {
        String q = queue("bucket-mismatch");
        RabbitMessageTransport t = transport(QueueType.QUORUM, 20);
        t.declare(q); // buckets 1 s and 2 s up front; 4 s is declared on first use
        try (var raw = RabbitFixtures.rawConnection(); var ch = raw.createChannel()) {
            ch.queueDeclare(q + ".retry.4s", true, false, false, Map.of()); // someone's classic queue of that name
        }
        List<Integer> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        t.subscribe(q, d -> {
            seen.add(d.attempt());
            d.retryAfter(Duration.ofSeconds(3), new dev.idemkit.domain.deadletter.AttemptRecord(d.attempt(),
                    java.time.Instant.now(), "boom"));
        });
        t.publish(q, OutgoingMessage.of("m-1", new byte[] {'x'}));

        RabbitDeadLetterQueue dlq = t.deadLetterQueue();
        Eventually.await(Duration.ofSeconds(20), "the dead letter", () -> dlq.depth(q) == 1);
        DeadLetterEntry entry = dlq.peek(q, 1).get(0);
        assertThat(entry.deadLetter().reason()).contains("its retry could not be scheduled")
                .contains(q + ".retry.4s").contains("x-queue-type");
        assertThat(entry.deadLetter().attempts()).hasSize(1);
        Eventually.pause(1_500);
        assertThat(seen).as("delivered once: no requeue loop").containsExactly(1);
    }

    @Test
    void anotherDeliveryLimitOnAnExistingQuorumQueueIsRefusedNamingBothValues() {
        String q = queue("limit");
        transport(QueueType.QUORUM, 20).declare(q);
        assertThatThrownBy(() -> transport(QueueType.QUORUM, 7).declare(q))
                .isInstanceOf(TopologyMismatchException.class)
                .hasMessageContaining("queue '" + q + "' has x-delivery-limit '20' where the settings want '7'")
                .hasMessageNotContaining(q + ".dlq' has");
    }

    @Test
    void aMessageWhoseConsumerDiesHoldingItEndsInTheDeadLetterQueueAfterTheDeliveryLimit() throws Exception {
        int limit = 3;
        String q = queue("limit-net");
        RabbitMessageTransport publisher = transport(QueueType.QUORUM, limit);
        publisher.publish(q, OutgoingMessage.of("poison-1", "kills its consumer".getBytes(StandardCharsets.UTF_8)));

        // the broker delivers it with counts 0..limit; each consumer dies (its connections dropped) before settling
        for (int death = 0; death <= limit; death++) {
            RabbitMessageTransport dying = transport(QueueType.QUORUM, limit);
            CountDownLatch holding = new CountDownLatch(1);
            dying.subscribe(q, d -> holding.countDown());
            assertThat(holding.await(20, TimeUnit.SECONDS)).as("delivery " + (death + 1)).isTrue();
            dying.abort();
        }

        RabbitDeadLetterQueue dlq = publisher.deadLetterQueue();
        Eventually.await(Duration.ofSeconds(20), "the dead letter", () -> dlq.depth(q) == 1);
        DeadLetterEntry entry = dlq.peek(q, 10).get(0);
        assertThat(entry.deadLetter().original().rawId()).isEqualTo("poison-1");
        assertThat(entry.deadLetter().reason()).contains("delivery limit reached").contains(q);
        assertThat(entry.deadLetter().original().headers()).as("broker bookkeeping is not a producer header")
                .doesNotContainKey("x-delivery-count");
        try (var raw = RabbitFixtures.rawConnection()) {
            assertThat(RabbitFixtures.messageCount(raw, q)).isZero();
        }
    }
}
