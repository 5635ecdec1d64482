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

import static org.assertj.core.api.Assertions.assertThat;

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
        RabbitSettings settings = privateNode().withConsumers(CONSUMERS)
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

    /**
     * A consumer closed and reopened during one alarm (the SIGTERM path, a restart, as a readiness-blind orchestrator
     * would do on DOWN) must not give back its held deliveries round after round: on a quorum queue each give-back
     * counts against the delivery limit, and healthy messages were dead-lettered with their handler never called (5 of
     * 5, 0 handler calls, with 4 rounds and a delivery limit of 3, before the consumers were cancelled during an alarm
     * and a fresh connection probed for it).
     */
    @Test
    void closingAndRestartingConsumersDuringAnAlarmDeadLettersNoHealthyMessage() throws Exception {
        String queue = RabbitFixtures.anyQueue("alarm-held");
        String other = RabbitFixtures.anyQueue("alarm-held-other");
        RabbitSettings settings = privateNode().withConsumers(1)
                .withPrefetch(5).withConfirmTimeout(Duration.ofMillis(500)).withDeliveryLimit(2);
        Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();
        AtomicInteger callsDuringAlarm = new AtomicInteger();
        java.util.concurrent.atomic.AtomicBoolean alarm = new java.util.concurrent.atomic.AtomicBoolean();
        DeliveryHandler handler = d -> {
            if (alarm.get()) {
                callsDuringAlarm.incrementAndGet();
            }
            handled.computeIfAbsent(d.message().rawId(), id -> new AtomicInteger()).incrementAndGet();
            d.ack();
        };
        SoftAssertions soft = new SoftAssertions();
        try (RabbitMessageTransport transport = new RabbitMessageTransport(settings, Clock.system(),
                RabbitFixtures.anyConnectionName("alarm-held"))) {
            for (int i = 0; i < 5; i++) {
                transport.publish(queue, OutgoingMessage.of("m-" + i, ("n=" + i).getBytes(StandardCharsets.UTF_8)));
            }
            transport.declare(other);
            alarm.set(true);
            setAlarm();
            java.util.concurrent.CompletableFuture<Void> producer = null;
            try {
                // the broker tells this connection only once it publishes: a producer's publish does
                producer = java.util.concurrent.CompletableFuture.runAsync(() -> {
                    try {
                        transport.publish(other, OutgoingMessage.of("during-alarm", new byte[1]));
                    } catch (RuntimeException expected) {
                        // written, outcome unknown (or not sent)
                    }
                });
                soft.assertThat(within(Duration.ofSeconds(10), () -> !"UP".equals(transport.health())))
                        .as("health DOWN once the producer published").isTrue();
                for (int round = 1; round <= 3; round++) { // the SIGTERM path: the subscription closes
                    var subscription = transport.subscribe(queue, handler);
                    Eventually.pause(1_500);
                    subscription.close();
                }
                // a restart: a fresh process connects during the alarm, consumes, and is stopped
                try (RabbitMessageTransport restarted = new RabbitMessageTransport(settings, Clock.system(),
                        RabbitFixtures.anyConnectionName("alarm-held-restart"))) {
                    soft.assertThat(restarted.health()).as("a transport opened during the alarm, before publishing")
                            .startsWith("DOWN");
                    var subscription = restarted.subscribe(queue, handler);
                    Eventually.pause(1_500);
                    subscription.close();
                }
            } finally {
                alarm.set(false);
                clearAlarm();
            }
            producer.get(30, java.util.concurrent.TimeUnit.SECONDS);
            soft.assertThat(within(Duration.ofSeconds(10), () -> "UP".equals(transport.health())))
                    .as("health UP after the alarm (it says \"%s\")", transport.health()).isTrue();
            try (var subscription = transport.subscribe(queue, handler)) {
                within(Duration.ofSeconds(20), () -> handled.size() + transport.deadLetterQueue().depth(queue) >= 5);
                Eventually.pause(1_000); // a second delivery of any would show now
            }
            soft.assertThat(callsDuringAlarm.get()).as("handler calls during the alarm").isZero();
            soft.assertThat(transport.deadLetterQueue().depth(queue)).as("healthy messages dead-lettered").isZero();
            for (int i = 0; i < 5; i++) {
                AtomicInteger n = handled.get("m-" + i);
                soft.assertThat(n == null ? 0 : n.get()).as("handler calls for m-%d", i).isEqualTo(1);
            }
            transport.deleteTopology(queue);
            transport.deleteTopology(other);
        }
        soft.assertAll();
    }

    /**
     * A producer's publish is bounded by the confirm timeout even when the broker blocks publishing after the write: it
     * fails, "written, outcome unknown", and the producer repeats it with the same id (the outbox relay holds its rows
     * for that long, never for the whole alarm). Before, the first publish of an alarm waited until the alarm ended.
     */
    @Test
    void aProducersPublishWrittenInAnAlarmFailsAfterItsConfirmTimeout() throws Exception {
        String queue = RabbitFixtures.anyQueue("alarm-producer");
        RabbitSettings settings = privateNode()
                .withConfirmTimeout(Duration.ofMillis(500));
        try (RabbitMessageTransport transport = new RabbitMessageTransport(settings, Clock.system(),
                RabbitFixtures.anyConnectionName("alarm-producer"))) {
            transport.declare(queue);
            setAlarm();
            long took;
            String outcome;
            try {
                long start = System.nanoTime();
                var producer = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    try {
                        transport.publish(queue, OutgoingMessage.of("p-1", new byte[1]));
                        return "confirmed";
                    } catch (RuntimeException e) {
                        return e.getMessage();
                    }
                });
                outcome = within(Duration.ofSeconds(6), producer::isDone) ? producer.join() : "still waiting after 6 s";
                took = (System.nanoTime() - start) / 1_000_000;
            } finally {
                clearAlarm();
            }
            assertThat(outcome).as("the producer's publish during the alarm (after %d ms)", took)
                    .contains("outcome unknown");
            assertThat(took).as("ms the producer's publish took").isLessThan(3_000);
            transport.deleteTopology(queue);
        }
    }

    /**
     * A publishing connection that recovers during an alarm still knows it is blocked: the gate keeps its state through
     * the recovery and probes the new connection, which the broker tells only once it publishes. Before, the recovery
     * opened the gate: health UP, new work handed out, until something published.
     */
    @Test
    void aConnectionRecoveredDuringAnAlarmStillKnowsItIsBlocked() throws Exception {
        String queue = RabbitFixtures.anyQueue("alarm-recovery");
        String name = RabbitFixtures.anyConnectionName("alarm-recovery");
        RabbitSettings settings = privateNode()
                .withConfirmTimeout(Duration.ofMillis(500));
        try (RabbitMessageTransport transport = new RabbitMessageTransport(settings, Clock.system(), name)) {
            transport.declare(queue);
            String afterRecovery;
            try {
                setAlarm();
                java.util.concurrent.CompletableFuture.runAsync(() -> { // the broker tells the connection now
                    try {
                        transport.publish(queue, OutgoingMessage.of("r-1", new byte[1]));
                    } catch (RuntimeException expected) {
                        // written, outcome unknown
                    }
                });
                assertThat(within(Duration.ofSeconds(10), () -> transport.health().contains("blocks publishing")))
                        .as("health says blocked before the recovery (it says \"%s\")", transport.health()).isTrue();
                broker.ctl(1, "close_all_connections", "idemkit test: a recovery during an alarm");
                Eventually.pause(1_500);
                Eventually.await(Duration.ofSeconds(20), "the publishing connection recovered", () -> {
                    try {
                        return broker.ctl(1, "list_connections", "client_properties").contains(name + "-publish");
                    } catch (Exception e) {
                        return false;
                    }
                });
                Eventually.pause(2_000); // the recovery listeners have run
                afterRecovery = transport.health();
            } finally {
                clearAlarm();
            }
            assertThat(afterRecovery).as("health after a recovery during the alarm").contains("blocks publishing");
            assertThat(within(Duration.ofSeconds(10), () -> "UP".equals(transport.health())))
                    .as("health UP after the alarm (it says \"%s\")", transport.health()).isTrue();
            transport.deleteTopology(queue);
        }
    }

    /**
     * The consuming connection closed by the broker during an alarm, while a delivery's retry copy waits for its confirm
     * and the rest of the prefetch is held: the settle stops waiting (its channel closed, the broker requeued the
     * original), the recovered connection's consumer takes no work until the alarm ends, and afterwards every effect is
     * applied once, nothing is dead-lettered and no copy is left over.
     */
    @Test
    void aConsumingConnectionLostDuringAnAlarmTakesNoWorkUntilItEnds() throws Exception {
        String queue = RabbitFixtures.anyQueue("alarm-consume-lost");
        String name = RabbitFixtures.anyConnectionName("alarm-consume-lost");
        RabbitSettings settings = privateNode().withConsumers(1)
                .withPrefetch(5).withConfirmTimeout(Duration.ofMillis(500)).withDeliveryLimit(3);
        InMemoryCounter effects = new InMemoryCounter();
        AtomicInteger calls = new AtomicInteger();
        java.util.concurrent.CountDownLatch alarmOn = new java.util.concurrent.CountDownLatch(1);
        Consumers consumers = new Consumers();
        SoftAssertions soft = new SoftAssertions();
        try (RabbitMessageTransport transport = new RabbitMessageTransport(settings, Clock.system(), name)) {
            for (int i = 0; i < 5; i++) {
                transport.publish(queue, OutgoingMessage.of("m-" + i, ("n=" + i).getBytes(StandardCharsets.UTF_8)));
            }
            ThreadLocal<Integer> attempt = new ThreadLocal<>();
            DeliveryHandler runtime = consumers.runtime((message, work) -> {
                calls.incrementAndGet();
                if (message.rawId().equals("m-0") && attempt.get() == 1) {
                    alarmOn.await(30, java.util.concurrent.TimeUnit.SECONDS);
                    throw new IllegalStateException("fails its first attempt"); // its retry copy, written in the alarm
                }
                effects.add(work, message.rawId(), 1);
            });
            int callsAfterRecovery = -1;
            String healthAfterRecovery = "";
            try (var subscription = transport.subscribe(queue, d -> {
                attempt.set(d.attempt());
                runtime.onDelivery(d);
            })) {
                // m-0's first attempt waits for the alarm; the gate hears of it from m-0's retry copy
                Eventually.await(Duration.ofSeconds(10), "m-0's first attempt", () -> calls.get() >= 1);
                try {
                    setAlarm();
                    alarmOn.countDown();
                    soft.assertThat(within(Duration.ofSeconds(20), () -> transport.health().contains("blocks publishing")))
                            .as("health DOWN once m-0's retry copy was written").isTrue();
                    int callsBeforeClose = calls.get();
                    java.util.List<String> closed = new java.util.ArrayList<>();
                    for (String pid : consumingConnections(name)) {
                        broker.ctl(1, "close_connection", pid, "idemkit test: lost");
                        closed.add(pid);
                    }
                    soft.assertThat(closed).as("consuming connections closed").hasSize(1);
                    Eventually.await(Duration.ofSeconds(30), "the consuming connection recovered (a new one)", () -> {
                        java.util.List<String> now = consumingConnections(name);
                        return !now.isEmpty() && now.stream().noneMatch(closed::contains);
                    });
                    Eventually.pause(3_000); // a reopened channel that consumed would have run m-0 again by now
                    callsAfterRecovery = calls.get() - callsBeforeClose;
                    healthAfterRecovery = transport.health();
                } finally {
                    alarmOn.countDown();
                    clearAlarm();
                }
                Eventually.await(Duration.ofSeconds(60), "every effect applied after the alarm",
                        () -> java.util.stream.IntStream.range(0, 5).allMatch(i -> effects.read("m-" + i) > 0));
                Eventually.await(Duration.ofSeconds(30), "no copy left in the queue, its buckets and hold queue",
                        () -> messagesIn(queue) == 0);
            }
            soft.assertThat(callsAfterRecovery).as("handler calls during the alarm after the consuming connection closed").isZero();
            soft.assertThat(healthAfterRecovery).as("health after the recovery").contains("blocks publishing");
            for (int i = 0; i < 5; i++) {
                soft.assertThat(effects.read("m-" + i)).as("effects of m-%d", i).isEqualTo(1);
            }
            soft.assertThat(transport.deadLetterQueue().depth(queue)).as("healthy messages dead-lettered").isZero();
            transport.deleteTopology(queue);
        }
        soft.assertAll();
    }

    /**
     * A settle of a delivery another consumer holds (a Spring listener container's, {@link RabbitAdoptedDeliveries})
     * waits through an alarm only while that consumer still holds it: once its channel closed, the broker has requeued
     * the original, and a copy published at the alarm's end would be a second delivery of the message (here a dead
     * letter of a message that is also redelivered). The settle stops waiting within a check and publishes nothing it
     * had not written. Before, the adopted settle waited on {@code () -> true}: its thread stayed until the alarm ended,
     * then published the copy.
     */
    @Test
    void anAdoptedSettleStopsWaitingOnceItsDeliveryIsNoLongerHeld() throws Exception {
        String queue = RabbitFixtures.anyQueue("alarm-adopted");
        RabbitSettings settings = privateNode()
                .withConfirmTimeout(Duration.ofMillis(500));
        java.util.concurrent.ExecutorService settles = java.util.concurrent.Executors.newFixedThreadPool(2);
        try (RabbitAdoptedDeliveries deliveries = new RabbitAdoptedDeliveries(settings, Clock.system(),
                RabbitFixtures.anyConnectionName("alarm-adopted"))) {
            deliveries.declare(queue);
            java.util.concurrent.atomic.AtomicBoolean firstHeld = new java.util.concurrent.atomic.AtomicBoolean(true);
            java.util.concurrent.atomic.AtomicBoolean secondHeld = new java.util.concurrent.atomic.AtomicBoolean(true);
            java.util.concurrent.Future<String> first;
            java.util.concurrent.Future<String> second;
            String health;
            try {
                setAlarm();
                // the first copy is written; the broker tells the settle connection it is blocked
                first = settles.submit(() -> deadLetter(deliveries, queue, "a-1", firstHeld::get));
                Eventually.await(Duration.ofSeconds(10), "the settle connection knows it is blocked",
                        () -> deliveries.health().contains("blocks publishing"));
                health = deliveries.health();
                // the second waits for publishing to open, nothing written
                second = settles.submit(() -> deadLetter(deliveries, queue, "a-2", secondHeld::get));
                Eventually.pause(1_000);
                assertThat(first.isDone() || second.isDone()).as("a settle ended while the broker blocks publishing")
                        .isFalse();
                secondHeld.set(false); // its consumer's channel closed: the broker requeued the original
                firstHeld.set(false);
                assertThat(within(Duration.ofSeconds(3), () -> first.isDone() && second.isDone()))
                        .as("both settles stopped waiting once their deliveries were no longer held").isTrue();
            } finally {
                clearAlarm();
            }
            assertThat(health).startsWith("DOWN");
            assertThat(second.get()).as("the settle that had written nothing").contains("nothing was published");
            assertThat(first.get()).as("the settle whose copy was written").contains("may still land");
            // a third, after the alarm, is confirmed; the written first copy lands, the second was never written
            assertThat(within(Duration.ofSeconds(10), () -> "UP".equals(deliveries.health()))).isTrue();
            assertThat(deadLetter(deliveries, queue, "a-3", () -> true)).isEqualTo("settled");
            Eventually.await(Duration.ofSeconds(20), "the first and third dead letters in the DLQ",
                    () -> deliveries.deadLetterQueue().depth(queue) >= 2);
            assertThat(deliveries.deadLetterQueue().peek(queue, 10))
                    .extracting(e -> e.deadLetter().original().rawId()).containsExactlyInAnyOrder("a-1", "a-3");
        } finally {
            settles.shutdownNow();
            try (RabbitMessageTransport cleanup = new RabbitMessageTransport(settings, Clock.system(),
                    RabbitFixtures.anyConnectionName("alarm-adopted-cleanup"))) {
                cleanup.deleteTopology(queue);
            }
        }
    }

    /** The pids of the connections named {@code <name>-consume} on the private node (empty when it cannot say). */
    private static java.util.List<String> consumingConnections(String name) {
        java.util.List<String> pids = new java.util.ArrayList<>();
        try {
            for (String line : broker.ctl(1, "list_connections", "pid", "client_properties").split("\n")) {
                if (line.contains("\"" + name + "-consume\"")) {
                    pids.add(line.trim().split("\\s+")[0]);
                }
            }
        } catch (Exception e) {
            return java.util.List.of();
        }
        return pids;
    }

    /** Dead-letters an adopted delivery of {@code id}: "settled", or what its settle threw. */
    private static String deadLetter(RabbitAdoptedDeliveries deliveries, String queue, String id,
            BooleanSupplier stillHeld) {
        com.rabbitmq.client.AMQP.BasicProperties props = new com.rabbitmq.client.AMQP.BasicProperties.Builder()
                .messageId(id).deliveryMode(2).build();
        try {
            deliveries.adopt(queue, props, new byte[] {1}, false, () -> { }, stillHeld)
                    .deadLetter("a poison message", new dev.idemkit.domain.deadletter.AttemptRecord(1,
                            java.time.Instant.now(), "IllegalStateException: poison"));
            return "settled";
        } catch (RuntimeException e) {
            return String.valueOf(e.getMessage());
        }
    }

    /** The test settings, on the private node. */
    private static RabbitSettings privateNode() {
        return RabbitFixtures.settings().withUri(URI.create(broker.uri(1)));
    }

    private static void setAlarm() throws Exception {
        broker.setMemoryAlarm(1);
    }

    private static void clearAlarm() throws Exception {
        broker.clearMemoryAlarm(1);
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
