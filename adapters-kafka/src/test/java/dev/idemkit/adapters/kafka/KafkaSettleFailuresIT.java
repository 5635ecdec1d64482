package dev.idemkit.adapters.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.deadletter.AttemptHistory;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.deadletter.DeadLetter;
import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * A settle that goes wrong never pins a partition: a settle that throws gives the record back, a delivery nobody
 * settles is given back after the settle timeout, a copy the broker will never take is dead-lettered (as a stub when
 * even the dead letter is too large), and a due time written into a retry topic cannot hold it past its bucket.
 */
class KafkaSettleFailuresIT extends KafkaITBase {
    private static final Duration PATIENCE = Duration.ofSeconds(60);


    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aSettleThatThrowsBeforeWritingGivesTheRecordBack() {
        KafkaMessageTransport t = transport(KafkaBroker.shared().settings().withPartitions(1));
        String topic = topic("settle-throws");
        t.publish(topic, OutgoingMessage.of("m-1", bytes("x")));
        List<Delivery> seen = new CopyOnWriteArrayList<>();
        List<Throwable> thrown = new CopyOnWriteArrayList<>();
        subscriptions.add(t.subscribe(topic, d -> {
            seen.add(d);
            if (seen.size() == 1) {
                try {
                    d.retryAfter(null, new AttemptRecord(1, Instant.now(), "x")); // a caller's bug: no delay
                } catch (RuntimeException e) {
                    thrown.add(e);
                }
            } else {
                d.ack();
            }
        }));
        Eventually.await(PATIENCE, "the record, again", () -> seen.size() >= 2);
        assertThat(thrown).hasSize(1);
        assertThat(seen.get(1).message().rawId()).isEqualTo("m-1");
    }

    @Test
    void aDeliveryNobodySettlesIsGivenBackAfterTheSettleTimeoutAndItsLateAckChangesNothing() throws Exception {
        KafkaMessageTransport t = transport(KafkaBroker.shared().settings().withPartitions(1)
                .withSettleTimeout(Duration.ofSeconds(2)));
        String topic = topic("never-settled");
        t.publish(topic, OutgoingMessage.of("m-1", bytes("x")));
        t.publish(topic, OutgoingMessage.of("m-2", bytes("x")));
        List<Delivery> seen = new CopyOnWriteArrayList<>();
        subscriptions.add(t.subscribe(topic, d -> {
            seen.add(d);
            if (seen.size() > 1) {
                d.ack();
            } // the first delivery is forgotten, as by a handler that swallowed an exception
        }));
        Eventually.await(PATIENCE, "m-1 given back and delivered again", () -> seen.stream()
                .filter(d -> d.message().rawId().equals("m-1")).count() >= 2);
        seen.get(0).ack(); // late: a no-op, not an exception
        assertThat(seen.stream().map(d -> d.message().rawId())).contains("m-2");
    }

    @Test
    void aRetryCopyTheBrokerWillNeverTakeIsDeadLetteredAndATooLargeDeadLetterBecomesAStub() throws Exception {
        // the transport's producer takes at most 4,000-byte requests; the record (3,900 bytes of body) fits, its
        // retry copy (plus the attempt history) and its dead letter (plus reason and history) do not
        KafkaMessageTransport t = transport(KafkaBroker.shared().settings().withPartitions(1)
                .withClientProperties(Map.of(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, "4000")));
        String topic = topic("too-large");
        t.declare(topic);
        byte[] body = new byte[3_700];
        Arrays.fill(body, (byte) 'a');
        try (KafkaProducer<byte[], byte[]> raw = new KafkaProducer<>(
                KafkaMessageTransport.producerProperties(KafkaBroker.shared().settings()), new ByteArraySerializer(),
                new ByteArraySerializer())) {
            RecordHeaders h = new RecordHeaders();
            h.add(KafkaWire.MESSAGE_ID, bytes("big-1"));
            raw.send(new ProducerRecord<byte[], byte[]>(topic, null, (byte[]) null, body, h)).get();
        }
        String longError = "IllegalStateException: " + "downstream said no; ".repeat(20);
        List<Delivery> seen = new CopyOnWriteArrayList<>();
        subscriptions.add(t.subscribe(topic, d -> {
            seen.add(d);
            d.retryAfter(Duration.ofMillis(100), new AttemptRecord(d.attempt(), Instant.now(), longError));
        }));
        Eventually.await(PATIENCE, "a dead letter", () -> t.deadLetters().depth(topic) == 1);
        DeadLetter dl = t.deadLetters().peek(topic, 1).get(0).deadLetter();
        assertThat(dl.original().rawId()).isEqualTo("big-1");
        assertThat(dl.reason()).contains("could not be written");
        assertThat(dl.original().headers()).containsKey(KafkaWire.BODY_DROPPED);
        assertThat(dl.original().headers().get(KafkaWire.BODY_DROPPED)).contains("3700 bytes").contains("partition 0")
                .contains("offset 0");
        Eventually.pause(1500);
        assertThat(seen).as("delivered once: neither retried nor given back forever").hasSize(1);
        String id = t.deadLetters().peek(topic, 1).get(0).id();
        assertThatThrownBy(() -> t.deadLetters().redrive(topic, id, new dev.idemkit.domain.deadletter.Approval("ops",
                "try again", Instant.now()))).as("an empty stub is never republished under the real message id")
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("stub without its body");
        assertThat(t.deadLetters().depth(topic)).isEqualTo(1);
    }

    /**
     * What a producer writes crosses into idemkit's copies only as data (KafkaWire.copyHeaders), and idemkit's reserved
     * x-idemkit- names not at all: before, a producer's x-idemkit-body-dropped header travelled into the dead letter
     * at the top, where it made the dead letter a stub that could never be redriven.
     */
    @Test
    void aProducersIdemkitNamedHeadersAreDataOnItsCopiesAndItsDeadLetterIsRedriven() throws Exception {
        KafkaMessageTransport t = transport(KafkaBroker.shared().settings().withPartitions(1));
        String topic = topic("forged-names");
        t.declare(topic);
        RecordHeaders h = new RecordHeaders();
        h.add(KafkaWire.MESSAGE_ID, bytes("forged-1"));
        h.add(KafkaWire.BODY_DROPPED, bytes("0 bytes, says the producer"));
        h.add(dev.idemkit.domain.deadletter.DeadLetterHeaders.REASON, bytes("the producer's reason"));
        h.add("tenant", bytes("acme"));
        raw.send(new ProducerRecord<byte[], byte[]>(topic, null, (byte[]) null, bytes("{\"n\":1}"), h)).get();
        List<Delivery> seen = new CopyOnWriteArrayList<>();
        subscriptions.add(t.subscribe(topic, d -> {
            seen.add(d);
            if (d.message().headers().containsKey(dev.idemkit.domain.deadletter.DeadLetterHeaders.REDRIVE_APPROVED_BY)) {
                d.ack();
            } else if (d.attempt() == 1) {
                d.retryAfter(Duration.ofMillis(100), new AttemptRecord(1, Instant.now(), "once"));
            } else {
                d.deadLetter("non-retryable: needs a fix", new AttemptRecord(d.attempt(), Instant.now(), "fix"));
            }
        }));
        Eventually.await(PATIENCE, "a dead letter", () -> t.deadLetters().depth(topic) == 1);
        var entry = t.deadLetters().peek(topic, 1).get(0);
        assertThat(entry.deadLetter().reason()).isEqualTo("non-retryable: needs a fix");
        assertThat(entry.deadLetter().original().headers()).containsEntry("tenant", "acme")
                .doesNotContainKey(KafkaWire.BODY_DROPPED);
        assertThat(seen.get(1).message().headers()).as("the retry copy: the producer's headers, its reserved names not")
                .containsEntry("tenant", "acme").doesNotContainKey(KafkaWire.BODY_DROPPED);
        assertThat(t.deadLetters().redrive(topic, entry.id(), new dev.idemkit.domain.deadletter.Approval("ops",
                "fixed", Instant.now()))).as("a dead letter with its body is redriven, whatever the producer wrote")
                .isTrue();
        Eventually.await(PATIENCE, "the redriven delivery", () -> seen.size() == 3);
        assertThat(seen.get(2).message().rawId()).isEqualTo("forged-1");
        assertThat(seen.get(2).message().body()).isEqualTo(bytes("{\"n\":1}"));
        assertThat(seen.get(2).message().headers()).containsEntry("tenant", "acme");
    }

    /**
     * Review finding: a late give-back of a later record while the partition re-fetches after an earlier one must not
     * drop the records queued below it. Here m-20 was given back (it comes back only through the re-fetch), the
     * re-fetch queues it behind a handler that is busy with m-15, and then m-30's first delivery is given back.
     */
    @Test
    void aLateGiveBackOfALaterRecordKeepsTheEarlierRecordsQueuedForTheRefetch() throws Exception {
        KafkaMessageTransport t = transport(KafkaBroker.shared().settings().withPartitions(1));
        String topic = topic("late-give-back");
        for (int i = 0; i < 40; i++) {
            t.publish(topic, OutgoingMessage.of("m-" + i, bytes("x")));
        }
        java.util.Map<String, KafkaDelivery> held = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.Set<String> acked = java.util.concurrent.ConcurrentHashMap.newKeySet();
        java.util.concurrent.CountDownLatch busy = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.Set<String> seenOnce = java.util.concurrent.ConcurrentHashMap.newKeySet();
        subscriptions.add(t.subscribe(topic, d -> {
            String id = d.message().rawId();
            boolean first = seenOnce.add(id);
            if (first && (id.equals("m-10") || id.equals("m-20") || id.equals("m-30"))) {
                held.put(id, (KafkaDelivery) d); // handed out, not settled (a batch waiting for its commit)
                return;
            }
            if (!first && id.equals("m-15")) {
                busy.countDown();
                try {
                    release.await(30, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            acked.add(id);
            d.ack();
        }));
        Eventually.await(PATIENCE, "the first pass", () -> held.size() == 3 && acked.contains("m-39"));
        held.get("m-10").abandon();
        held.get("m-20").abandon();
        assertThat(busy.await(30, java.util.concurrent.TimeUnit.SECONDS)).as("the re-fetch reached m-15").isTrue();
        held.get("m-30").abandon();
        release.countDown();
        Eventually.await(PATIENCE, "m-20 and m-30 acked after the re-fetch",
                () -> acked.contains("m-20") && acked.contains("m-30"));
    }

    @Test
    void aDueTimeFarAwayWrittenIntoARetryTopicHoldsTheRecordNoLongerThanItsBucket() throws Exception {
        KafkaMessageTransport t = transport(KafkaBroker.shared().settings().withPartitions(1));
        String topic = topic("far-due");
        t.declare(topic);
        try (KafkaProducer<byte[], byte[]> raw = new KafkaProducer<>(
                KafkaMessageTransport.producerProperties(KafkaBroker.shared().settings()), new ByteArraySerializer(),
                new ByteArraySerializer())) {
            RecordHeaders h = new RecordHeaders();
            h.add(KafkaWire.MESSAGE_ID, bytes("late-1"));
            h.add(AttemptHistory.HEADER, bytes("1\t2026-01-01T00:00:00Z\tfailed"));
            h.add(KafkaWire.DUE_AT, bytes(Long.toString(Long.MAX_VALUE)));
            h.add(KafkaWire.ORIGIN_PARTITION, bytes("0"));
            h.add(KafkaWire.ORIGIN_OFFSET, bytes("0"));
            raw.send(new ProducerRecord<byte[], byte[]>(KafkaTopics.retryTopic(topic, Duration.ofSeconds(1)), null,
                    (byte[]) null, bytes("x"), h)).get();
        }
        List<Delivery> seen = new CopyOnWriteArrayList<>();
        subscriptions.add(t.subscribe(topic, d -> {
            seen.add(d);
            d.ack();
        }));
        Eventually.await(Duration.ofSeconds(30), "the retry, within its 1 s bucket", () -> !seen.isEmpty());
        assertThat(seen.get(0).attempt()).isEqualTo(2);
        assertThatThrownBy(() -> seen.get(0).ack()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("already settled");
    }
}
