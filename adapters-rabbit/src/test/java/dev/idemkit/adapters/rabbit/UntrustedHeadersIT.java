package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.idemkit.adapters.rabbit.RabbitDeadLetter.BrokerDeath;
import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.domain.deadletter.AttemptHistory;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.service.ConsumerSettings;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * What a producer can put in a message is data, never an instruction: the broker's own dead-lettering
 * (expired, maxlen) keeps whatever {@code x-idemkit-*} headers the producer wrote, and a redriven copy
 * keeps {@code x-death}. Neither may reroute a redrive, fake an attempt count, or get a republished
 * copy dropped by RabbitMQ's dead-letter cycle detection.
 */
class UntrustedHeadersIT extends RabbitITBase {
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    /** Publishes straight to {@code queue} with a 1 ms TTL and no consumer: the BROKER dead-letters it into Q.dlq. */
    private void expireIntoTheDeadLetterQueue(String queue, String id, Map<String, Object> headers) throws Exception {
        try (Channel ch = raw.createChannel()) {
            ch.basicPublish("", queue, new AMQP.BasicProperties.Builder().messageId(id).deliveryMode(2)
                    .expiration("1").headers(headers).build(), ("{\"id\":\"" + id + "\"}").getBytes(StandardCharsets.UTF_8));
        }
        Eventually.await(PATIENCE, "the broker's dead letter", () -> transport.deadLetterQueue().depth(queue) == 1);
    }

    @Test
    void aBrokerExpiredMessageRedrivenThatFailsOnceIsProcessedExactlyOnce() throws Exception {
        String queue = queue("expired-redrive");
        expireIntoTheDeadLetterQueue(queue, "exp-1", Map.of());
        RabbitDeadLetter dead = transport.deadLetterQueue().inspect(queue, 10).get(0);
        assertThat(dead.brokerDeaths()).extracting(BrokerDeath::queue).containsExactly(queue);

        Map<String, AtomicInteger> effects = new ConcurrentHashMap<>();
        AtomicInteger calls = new AtomicInteger();
        Consumers consumers = new Consumers();
        subscribe(transport, queue, consumers.runtime(ConsumerSettings.defaults("expired-redrive")
                .withRetryPolicy(Consumers.quickRetries()), (message, work) -> {
                    if (calls.incrementAndGet() == 1) {
                        throw new IllegalStateException("downstream busy once");
                    }
                    effects.computeIfAbsent(message.rawId(), k -> new AtomicInteger()).incrementAndGet();
                }));
        assertThat(transport.deadLetterQueue().redrive(queue, dead.entry().id(),
                new Approval("ops", "broker expired it during an outage", Instant.now()))).isTrue();

        Eventually.await(PATIENCE, "the redriven message, after one retry", () -> effects.containsKey("exp-1"));
        Eventually.pause(1500);
        assertThat(effects.get("exp-1")).as("effect runs").hasValue(1);
        assertThat(calls).as("one failure, one success").hasValue(2);
        assertThat(transport.deadLetterQueue().depth(queue)).isZero();
        assertThat(ready(queue)).isZero();
    }

    @Test
    void aRedrivenMessageThatFailsForGoodKeepsItsEarlierBrokerDeathsInspectable() throws Exception {
        String queue = queue("expired-history");
        expireIntoTheDeadLetterQueue(queue, "exp-2", Map.of());
        RabbitDeadLetter first = transport.deadLetterQueue().inspect(queue, 10).get(0);
        Consumers consumers = new Consumers();
        subscribe(transport, queue, consumers.runtime(ConsumerSettings.defaults("expired-history")
                .withRetryPolicy(Consumers.quickRetries()), (message, work) -> {
                    throw new IllegalStateException("still broken");
                }));
        transport.deadLetterQueue().redrive(queue, first.entry().id(), new Approval("ops", "try again", Instant.now()));

        Eventually.await(PATIENCE, "the second dead letter", () -> transport.deadLetterQueue().depth(queue) == 1
                && !transport.deadLetterQueue().inspect(queue, 1).get(0).entry().id().equals(first.entry().id()));
        RabbitDeadLetter second = transport.deadLetterQueue().inspect(queue, 1).get(0);
        assertThat(second.entry().deadLetter().attempts()).hasSize(3);
        assertThat(second.brokerDeaths().get(0).queue()).isEqualTo(RabbitTopology.holdQueue(queue));
        assertThat(second.earlierDeaths()).as("the broker's first dead-lettering, moved out of x-death")
                .anySatisfy(d -> {
                    assertThat(d.queue()).isEqualTo(queue);
                    assertThat(d.reason()).isEqualTo("expired");
                });
    }

    @Test
    void aRedriveGoesOnlyToTheQueueWhoseDeadLettersWereReadWhateverTheProducerWrote() throws Exception {
        String queue = queue("forged-origin");
        String victim = queue("victim");
        Map<String, Object> forged = new HashMap<>();
        forged.put(AmqpMessages.ORIGIN_QUEUE, victim);
        forged.put(AmqpMessages.REASON, "\u001b[2Jall good, redrive me");
        forged.put(AmqpMessages.DEAD_LETTER_ID, "forged-id");
        forged.put(AmqpMessages.DEAD_LETTERED_AT, "2020-01-01T00:00:00Z");
        forged.put(AttemptHistory.HEADER, AttemptHistory.encode(List.of(
                new AttemptRecord(1, Instant.parse("2020-01-01T00:00:00Z"), "forged"))));
        expireIntoTheDeadLetterQueue(queue, "forged-1", forged);

        RabbitDeadLetter dead = transport.deadLetterQueue().inspect(queue, 10).get(0);
        assertThat(dead.entry().deadLetter().originQueue()).isEqualTo(queue);
        assertThat(dead.entry().id()).isNotEqualTo("forged-id");
        assertThat(dead.entry().deadLetter().reason()).doesNotContain("redrive me")
                .contains("broker dead-lettered it from " + queue + " (expired)");
        assertThat(dead.entry().deadLetter().attempts()).as("a producer's history is not ours").isEmpty();
        assertThat(dead.entry().deadLetter().deadLetteredAt()).isAfter(Instant.parse("2025-01-01T00:00:00Z"));

        assertThat(transport.deadLetterQueue().redrive(queue, dead.entry().id(),
                new Approval("ops", "checked", Instant.now()))).isTrue();
        Eventually.await(PATIENCE, "the redriven copy in its own queue", () -> readyNow(queue) == 1);
        assertThat(ready(victim)).as("nothing published into another queue").isZero();
    }

    private long readyNow(String q) {
        try {
            return ready(q);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * CC and BCC (sender-selected distribution) route the producer's own publish; a copy idemkit publishes carries the
     * producer's headers only as data (AmqpMessages.CROSSING_HEADERS). Before, every retry copy of a poison with CC
     * naming its own queue was routed there as well, and each of those failed and multiplied again (938-1,300 handler
     * calls for one message of 3 attempts), and CC naming another queue leaked every copy there.
     */
    @Test
    void aPoisonWithCcAndBccIsTriedAsItsPolicySaysDeadLetteredOnceAndLeaksNoCopy() throws Exception {
        String queue = queue("cc-poison");
        String other = queue("cc-other");
        String hidden = queue("bcc-other");
        AtomicInteger calls = new AtomicInteger();
        List<Map<String, String>> seenHeaders = new CopyOnWriteArrayList<>();
        Consumers consumers = new Consumers();
        subscribe(transport, queue, consumers.runtime(ConsumerSettings.defaults("cc-poison")
                .withRetryPolicy(Consumers.quickRetries()), (message, work) -> {
                    calls.incrementAndGet();
                    seenHeaders.add(message.headers());
                    throw new IllegalStateException("poison");
                }));
        try (Channel ch = raw.createChannel()) {
            ch.basicPublish("", queue, new AMQP.BasicProperties.Builder().messageId("cc-1").deliveryMode(2)
                    .headers(Map.of("CC", List.of(queue, other), "BCC", List.of(hidden), "tenant", "acme")).build(),
                    "{\"poison\":true}".getBytes(StandardCharsets.UTF_8));
        }
        Eventually.await(PATIENCE, "the dead letter", () -> transport.deadLetterQueue().depth(queue) >= 1);
        Eventually.await(PATIENCE, "nothing left in the queue, its retry buckets or its hold queue",
                () -> waiting(queue) == 0);
        int attempts = Consumers.quickRetries().maxAttempts();
        assertThat(calls.get()).as("handler calls").isEqualTo(attempts);
        assertThat(transport.deadLetterQueue().depth(queue)).as("dead letters").isEqualTo(1);
        assertThat(ready(other)).as("the producer's CC copy, and no copy of idemkit's").isEqualTo(1);
        assertThat(ready(hidden)).as("the producer's BCC copy, and no copy of idemkit's").isEqualTo(1);
        assertThat(seenHeaders).as("the producer's headers, as data, on every attempt").hasSize(attempts)
                .allSatisfy(h -> assertThat(h).containsEntry("tenant", "acme"));
        RabbitDeadLetter dead = transport.deadLetterQueue().inspect(queue, 10).get(0);
        assertThat(dead.entry().deadLetter().original().headers()).containsEntry("tenant", "acme");
    }

    @Test
    void anAttemptHistoryThatTheProducerSetIsNotTakenForAttempts() throws Exception {
        String queue = queue("forged-attempts");
        List<Delivery> seen = new CopyOnWriteArrayList<>();
        subscribe(transport, queue, d -> {
            seen.add(d);
            d.ack();
        });
        String history = AttemptHistory.encode(List.of(new AttemptRecord(1, Instant.now(), "forged"),
                new AttemptRecord(2, Instant.now(), "forged"), new AttemptRecord(3, Instant.now(), "forged")));
        try (Channel ch = raw.createChannel()) {
            ch.basicPublish("", queue, new AMQP.BasicProperties.Builder().messageId("m-1").deliveryMode(2)
                    .headers(Map.of(AttemptHistory.HEADER, history)).build(), new byte[] {'x'});
        }
        Eventually.await(PATIENCE, "the delivery", () -> !seen.isEmpty());
        assertThat(seen.get(0).attempt()).isEqualTo(1);
        assertThat(seen.get(0).history()).isEmpty();
    }

    /** Ready messages of {@code queue}, its retry buckets and its hold queue. */
    private long waiting(String queue) {
        try {
            long n = ready(queue) + dev.idemkit.testsupport.TestRabbit.readyOrZero(raw, RabbitTopology.holdQueue(queue));
            for (int bucket : RabbitTopology.allBuckets()) {
                n += dev.idemkit.testsupport.TestRabbit.readyOrZero(raw, RabbitTopology.retryQueue(queue, bucket));
            }
            return n;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
