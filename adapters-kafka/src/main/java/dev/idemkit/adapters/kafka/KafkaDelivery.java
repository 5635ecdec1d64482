package dev.idemkit.adapters.kafka;

import dev.idemkit.domain.Message;
import dev.idemkit.domain.deadletter.AttemptHistory;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.deadletter.DeadLetterHeaders;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.TransportException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One record handed to a handler. Settling marks its offset settled, so that the partition's commit can pass it;
 * a retry or a dead letter first writes the copy (retry topic or dead-letter topic) and waits for the broker's
 * ack, so a crash in between leaves the record uncommitted (redelivered, absorbed by the inbox), never lost. When
 * the copy cannot be written, the partition is rewound to the record and it comes back after a pause.
 */
final class KafkaDelivery implements Delivery {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaDelivery.class);
    private static final int OPEN = 0;
    private static final int SETTLING = 1;
    private static final int SETTLED = 2;
    /** How long a record whose copy could not be written waits before it is fetched again. */
    static final Duration REWIND_PAUSE = Duration.ofSeconds(1);

    private final KafkaSubscription subscription;
    private final KafkaSubscription.PartitionState partition;
    private final ConsumerRecord<byte[], byte[]> record;
    private final Message message;
    private final List<AttemptRecord> history;
    private final KafkaWire.Origin origin;
    private final AtomicInteger state = new AtomicInteger(OPEN);

    KafkaDelivery(KafkaSubscription subscription, KafkaSubscription.PartitionState partition,
            ConsumerRecord<byte[], byte[]> record, boolean fromRetryTopic) {
        this.subscription = subscription;
        this.partition = partition;
        this.record = record;
        String topic = subscription.topic();
        List<AttemptRecord> h = List.of();
        KafkaWire.Origin o = new KafkaWire.Origin(record.partition(), record.offset());
        if (fromRetryTopic) {
            try {
                h = List.copyOf(KafkaWire.history(record.headers()));
                o = new KafkaWire.Origin(Integer.parseInt(KafkaWire.last(record.headers(), KafkaWire.ORIGIN_PARTITION)),
                        Long.parseLong(KafkaWire.last(record.headers(), KafkaWire.ORIGIN_OFFSET)));
            } catch (RuntimeException unreadable) {
                LOG.warn("retry record topic={} partition={} offset={} has unreadable idemkit headers ({});"
                        + " taken as attempt {}", record.topic(), record.partition(), record.offset(),
                        unreadable.getMessage(), h.size() + 1);
            }
        }
        this.history = h;
        this.origin = o;
        this.message = new Message(KafkaWire.last(record.headers(), KafkaWire.MESSAGE_ID),
                record.value() == null ? new byte[0] : record.value(),
                KafkaWire.visible(record.headers(), fromRetryTopic ? KafkaWire.RETRY_BOOKKEEPING
                        : Set.of(KafkaWire.MESSAGE_ID)), topic);
    }

    @Override
    public Message message() {
        return message;
    }

    @Override
    public int attempt() {
        return history.size() + 1;
    }

    @Override
    public List<AttemptRecord> history() {
        return history;
    }

    /** Kafka has no redelivered flag: a record fetched again after a restart looks new. */
    @Override
    public boolean redelivered() {
        return !history.isEmpty();
    }

    @Override
    public void ack() {
        begin();
        done();
    }

    @Override
    public void retryAfter(Duration delay, AttemptRecord failed) {
        begin();
        KafkaSettings settings = subscription.settings();
        Duration bucket = KafkaTopics.bucketFor(settings.retryBuckets(), delay);
        Duration wait = delay.compareTo(bucket) > 0 ? bucket : delay.isNegative() ? Duration.ZERO : delay;
        RecordHeaders headers = KafkaWire.copyWithout(record.headers(), KafkaWire.RETRY_BOOKKEEPING);
        stamp(headers);
        KafkaWire.put(headers, AttemptHistory.HEADER, AttemptHistory.encode(AttemptHistory.append(history, failed)));
        KafkaWire.put(headers, KafkaWire.DUE_AT, Long.toString(System.currentTimeMillis() + wait.toMillis()));
        write(KafkaTopics.retryTopic(subscription.topic(), bucket), headers, "retry");
        done();
    }

    @Override
    public void deadLetter(String reason, AttemptRecord failed) {
        begin();
        Set<String> dropped = new HashSet<>(KafkaWire.RETRY_BOOKKEEPING);
        dropped.addAll(DeadLetterHeaders.DEAD_LETTER);
        RecordHeaders headers = KafkaWire.copyWithout(record.headers(), dropped);
        stamp(headers);
        List<AttemptRecord> attempts = AttemptHistory.append(history, failed);
        KafkaWire.put(headers, DeadLetterHeaders.REASON, reason);
        KafkaWire.put(headers, DeadLetterHeaders.ORIGIN_QUEUE, subscription.topic());
        KafkaWire.put(headers, AttemptHistory.HEADER, AttemptHistory.encode(attempts));
        KafkaWire.put(headers, DeadLetterHeaders.DEAD_LETTERED_AT, Instant.now().toString());
        write(KafkaTopics.deadLetterTopic(subscription.topic()), headers, "dead letter");
        LOG.info("dead-lettered topic={} partition={} offset={} message_id={} attempts={} reason=\"{}\"",
                subscription.topic(), origin.partition(), origin.offset(), KafkaWire.printable(message.rawId()),
                attempts.size(), reason);
        done();
    }

    private void stamp(RecordHeaders headers) {
        if (message.rawId() != null) {
            KafkaWire.put(headers, KafkaWire.MESSAGE_ID, message.rawId());
        }
        KafkaWire.put(headers, KafkaWire.ORIGIN_PARTITION, Integer.toString(origin.partition()));
        KafkaWire.put(headers, KafkaWire.ORIGIN_OFFSET, Long.toString(origin.offset()));
    }

    private void write(String topic, RecordHeaders headers, String what) {
        try {
            subscription.send(new ProducerRecord<>(topic, null, record.key(), record.value(), headers));
        } catch (RuntimeException e) {
            state.set(OPEN);
            abandon();
            throw e instanceof TransportException t ? t
                    : new TransportException("the " + what + " copy of " + describe() + " was not written", e);
        }
    }

    /** Gives the record back: its partition is rewound to it and it is fetched again after a pause. */
    void abandon() {
        if (state.compareAndSet(OPEN, SETTLED)) {
            subscription.rewind(partition, record.offset(), REWIND_PAUSE);
        }
    }

    boolean settled() {
        return state.get() == SETTLED;
    }

    private void begin() {
        if (!state.compareAndSet(OPEN, SETTLING)) {
            throw new IllegalStateException("delivery of " + describe() + " was already settled");
        }
    }

    private void done() {
        state.set(SETTLED);
        subscription.settled(partition, record.offset());
    }

    private String describe() {
        return record.topic() + "-" + record.partition() + "@" + record.offset();
    }
}
