package dev.idemkit.adapters.kafka;

import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.Subscription;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Records that a consumer outside idemkit fetched (a Spring Kafka listener container), settled on this adapter's
 * paths: the counterpart of adapters-rabbit's {@code RabbitAdoptedDeliveries} (docs/ARCHITECTURE.md section 14).
 *
 * <ul>
 *   <li>{@link #adopt} turns a record of a work topic {@code T} into a {@link Delivery} for the one delivery flow. Its
 *       ack does nothing of its own (the container commits the offset once its listener returned); a retry writes the
 *       copy to {@code T.retry.<n>s} and a dead letter to {@code T.dlt}, in this adapter's vocabulary, each acked by
 *       the broker before the delivery counts as settled; a copy that cannot be written leaves the delivery
 *       {@linkplain Adopted#givenBack() given back}, for the caller to hand the record back to its container.</li>
 *   <li>{@link #subscribeRetries} consumes {@code T}'s retry topics for that consumer group, each paused until its
 *       copies are due, as {@link KafkaMessageTransport}'s own subscriptions do: a retry never blocks {@code T}'s
 *       partition.</li>
 * </ul>
 * The retry copies of a group are stamped with the retry consumer group {@code <group>.T}: another service consuming
 * {@code T} in another group leaves them alone.
 */
public final class KafkaAdoptedDeliveries {
    private final KafkaMessageTransport transport;

    /** Settles through {@code transport}'s idempotent producer; its settings give the retry buckets and timeouts. */
    public KafkaAdoptedDeliveries(KafkaMessageTransport transport) {
        this.transport = Objects.requireNonNull(transport, "transport");
    }

    /** Creates {@code topic} (when missing), its retry topics and its dead-letter topics. */
    public void declare(String topic) {
        transport.declare(topic);
    }

    /** Whether {@code topic} can be a work topic (not one of idemkit's retry or dead-letter topics). */
    public static boolean isWorkTopic(String topic) {
        try {
            KafkaTopics.validWorkTopic(topic);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** The dead-letter topics (read, redrive) of the adopted work topics. */
    public KafkaDeadLetterQueue deadLetters() {
        return transport.deadLetters();
    }

    /**
     * A record of work topic {@code record.topic()} that the consumer group {@code group} fetched, as a delivery of
     * this adapter.
     */
    public Adopted adopt(String group, ConsumerRecord<byte[], byte[]> record) {
        Adopted adopted = new Adopted();
        adopted.delivery = new KafkaDelivery(source(group, record.topic()), adopted, record, false);
        return adopted;
    }

    /**
     * Consumes {@code topic}'s retry topics for consumer group {@code group}'s listener: each copy, once due, goes to
     * {@code handler} as a delivery whose settles are this adapter's (a retry writes the next copy, a dead letter
     * writes to {@code topic.dlt}); its offset is committed once settled. At most {@code concurrency} copies are
     * handled at once (the listener's own container's concurrency, so that the listener is never called by more
     * threads for its retries than for its records).
     */
    public Subscription subscribeRetries(String group, String topic, int concurrency, DeliveryHandler handler) {
        transport.declare(topic);
        KafkaSubscription s = new KafkaSubscription(topic, settings(group).withConcurrency(concurrency), handler,
                transport.producer(), () -> { }, false, null);
        s.start();
        return s;
    }

    /**
     * The record as its listener saw it on the work topic: a retry copy (a delivery of {@link #subscribeRetries}) as
     * the record of {@code T} it is a copy of (its partition and offset, its producer's headers and the message id);
     * a redrive copy on {@code T} with its producer's headers; any other record as it is.
     */
    public static ConsumerRecord<byte[], byte[]> workRecord(Delivery delivery) {
        if (!(delivery instanceof KafkaDelivery k)) {
            throw new IllegalArgumentException("not a delivery of the Kafka adapter: " + delivery);
        }
        ConsumerRecord<byte[], byte[]> r = k.record();
        if (!KafkaWire.isCopy(r.headers())) {
            return r;
        }
        KafkaWire.Origin origin = k.origin();
        return new ConsumerRecord<>(k.workTopic(), origin.partition(), origin.offset(), r.timestamp(),
                r.timestampType(), r.serializedKeySize(), r.serializedValueSize(), r.key(), r.value(),
                KafkaWire.producerHeaders(r.headers()), Optional.empty());
    }

    private KafkaSettings settings(String group) {
        return transport.settings().withGroupPrefix(Objects.requireNonNull(group, "group"));
    }

    private KafkaDelivery.Source source(String group, String topic) {
        KafkaSettings settings = settings(group);
        return new KafkaDelivery.Source() {
            @Override
            public String topic() {
                return topic;
            }

            @Override
            public KafkaSettings settings() {
                return settings;
            }

            @Override
            public void send(org.apache.kafka.clients.producer.ProducerRecord<byte[], byte[]> record) {
                KafkaMessageTransport.sendAndWait(transport.producer(), record, settings.sendTimeout());
            }
        };
    }

    /** An adopted record's delivery, and whether a settle gave it back (its copy could not be written). */
    public static final class Adopted implements KafkaDelivery.Settle {
        private KafkaDelivery delivery;
        private volatile boolean givenBack;
        private volatile KafkaDelivery.Outcome outcome;

        public Delivery delivery() {
            return delivery;
        }

        /** A settle could not complete: the record must be handed back to its container and come again. */
        public boolean givenBack() {
            return givenBack;
        }

        /** Whether the flow settled it (acked, retried or dead-lettered). */
        public boolean settled() {
            return outcome != null;
        }

        @Override
        public void settled(KafkaDelivery d, KafkaDelivery.Outcome o) {
            outcome = o;
        }

        @Override
        public void giveBack(KafkaDelivery d, Duration pause) {
            givenBack = true;
        }
    }
}
