package dev.idemkit.adapters.kafka;

import dev.idemkit.domain.Message;
import dev.idemkit.domain.deadletter.AttemptHistory;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.deadletter.DeadLetterHeaders;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.LogPosition;
import dev.idemkit.ports.out.TransportException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One record handed to a handler, from a consumer group's partition ({@link KafkaSubscription}) or a share group
 * ({@link KafkaShareSubscription}). A retry or a dead letter first writes the copy (retry topic or dead-letter topic)
 * and waits for the broker's ack, and only then tells its {@link Settle} the outcome, so a crash in between leaves the
 * record unsettled (delivered again, absorbed by the inbox), never lost. When the copy cannot be written, the record is
 * given back (a partition rewound to it; a share group's record released) and comes again.
 */
final class KafkaDelivery implements Delivery {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaDelivery.class);
    private static final int OPEN = 0;
    private static final int SETTLING = 1;
    private static final int SETTLED = 2;
    /** Given back (its partition rewound to it): a late settle changes nothing, the record comes again. */
    private static final int ABANDONED = 3;
    /** How long a record whose copy could not be written waits before it is fetched again. */
    static final Duration REWIND_PAUSE = Duration.ofSeconds(1);

    /** Where a delivery comes from: its work topic, the settings, and how a copy is written. */
    interface Source {
        String topic();

        KafkaSettings settings();

        /** Writes a copy and waits for the broker's ack. */
        void send(ProducerRecord<byte[], byte[]> record);
    }

    /** What a settled delivery turned into. */
    enum Outcome {
        ACKED, RETRIED, DEAD_LETTERED
    }

    /**
     * Where a delivery's outcome goes: a consumer group's partition ledger, whose commit may then pass the record, or a
     * share group's acknowledgement.
     */
    interface Settle {
        /** The delivery is settled; a retry or dead-letter copy is already acked by the broker. */
        void settled(KafkaDelivery delivery, Outcome outcome);

        /** The delivery was not settled and is given back: the record comes again, after {@code pause} at least. */
        void giveBack(KafkaDelivery delivery, Duration pause);

        /** {@link Delivery#positionAfter}: where the partition stands once these are settled; empty without positions. */
        default Optional<LogPosition> positionAfter(KafkaDelivery delivery, List<? extends Delivery> together) {
            return Optional.empty();
        }
    }

    private final Source subscription;
    private final Settle settle;
    private final ConsumerRecord<byte[], byte[]> record;
    private final Message message;
    private final List<AttemptRecord> history;
    private final KafkaWire.Origin origin;
    private final AtomicInteger state = new AtomicInteger(OPEN);
    private final long handedOutNanos = System.nanoTime();

    KafkaDelivery(Source subscription, Settle settle, ConsumerRecord<byte[], byte[]> record, boolean fromRetryTopic) {
        this.subscription = subscription;
        this.settle = settle;
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
                        : KafkaWire.ID_ONLY), topic);
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

    /**
     * A retry copy, or a share group's record the broker delivered before. A consumer group has no redelivered flag: a
     * record fetched again after a restart looks new there.
     */
    @Override
    public boolean redelivered() {
        return !history.isEmpty() || deliveryCount() > 1;
    }

    /** How many times a share group delivered this record (this time included); 1 for a consumer group's. */
    int deliveryCount() {
        return record.deliveryCount().map(Short::intValue).orElse(1);
    }

    ConsumerRecord<byte[], byte[]> record() {
        return record;
    }

    /** Where the record first came from: its own coordinates, or those its retry copy carries. */
    KafkaWire.Origin origin() {
        return origin;
    }

    /** The work topic this delivery belongs to (a retry copy's too). */
    String workTopic() {
        return subscription.topic();
    }

    @Override
    public Optional<LogPosition> positionAfter(List<? extends Delivery> settledTogether) {
        return settle.positionAfter(this, settledTogether);
    }

    @Override
    public void ack() {
        if (begin()) {
            done(Outcome.ACKED);
        }
    }

    @Override
    public void retryAfter(Duration delay, AttemptRecord failed) {
        if (!begin()) {
            return;
        }
        try {
            KafkaSettings settings = subscription.settings();
            Duration bucket = KafkaTopics.bucketFor(settings.retryBuckets(), delay);
            Duration wait = delay.compareTo(bucket) > 0 ? bucket : delay.isNegative() ? Duration.ZERO : delay;
            RecordHeaders headers = KafkaWire.copyHeaders(record.headers());
            stamp(headers);
            KafkaWire.put(headers, AttemptHistory.HEADER, AttemptHistory.encode(AttemptHistory.append(history, failed)));
            KafkaWire.put(headers, KafkaWire.DUE_AT, Long.toString(System.currentTimeMillis() + wait.toMillis()));
            KafkaWire.put(headers, KafkaWire.GROUP, settings.group(subscription.topic()));
            try {
                subscription.send(new ProducerRecord<>(KafkaTopics.retryTopic(subscription.topic(), bucket), null,
                        record.key(), record.value(), headers));
            } catch (TransportException e) {
                if (!permanent(e)) {
                    throw e;
                }
                // the broker will never take this copy: retrying the write forever would pin the partition
                writeDeadLetter("its retry copy could not be written (attempt " + failed.number() + " failed: "
                        + failed.error() + "): " + rootMessage(e), AttemptHistory.append(history, failed));
                done(Outcome.DEAD_LETTERED);
                return;
            }
        } catch (RuntimeException e) {
            giveBack();
            throw e;
        }
        done(Outcome.RETRIED);
    }

    @Override
    public void deadLetter(String reason, AttemptRecord failed) {
        if (!begin()) {
            return;
        }
        try {
            writeDeadLetter(reason, AttemptHistory.append(history, failed));
        } catch (RuntimeException e) {
            giveBack();
            throw e;
        }
        done(Outcome.DEAD_LETTERED);
    }

    /**
     * The dead letter of a record the transport itself gives up on (a share group's last delivery): as {@link
     * #deadLetter}, except that a copy that cannot be written leaves the delivery open, for the caller to try again
     * while the record is still its, instead of giving it back (which would let the broker archive it).
     */
    void deadLetterOrStayOpen(String reason, AttemptRecord failed) {
        if (!begin()) {
            return;
        }
        try {
            writeDeadLetter(reason, AttemptHistory.append(history, failed));
        } catch (RuntimeException e) {
            state.set(OPEN);
            throw e;
        }
        done(Outcome.DEAD_LETTERED);
    }

    /**
     * The dead letter: the record with its headers, the reason and the history. When the broker will never take that
     * (too large), a stub without the body and the producer's headers, saying where the record still is.
     */
    private void writeDeadLetter(String reason, List<AttemptRecord> attempts) {
        RecordHeaders headers = KafkaWire.copyHeaders(record.headers());
        String dlt = KafkaTopics.deadLetterTopic(subscription.topic());
        try {
            subscription.send(new ProducerRecord<>(dlt, null, record.key(), record.value(),
                    deadLetterHeaders(headers, reason, attempts)));
        } catch (TransportException e) {
            if (!permanent(e)) {
                throw e;
            }
            RecordHeaders stub = new RecordHeaders();
            int size = record.value() == null ? 0 : record.value().length;
            KafkaWire.put(stub, KafkaWire.BODY_DROPPED, size + " bytes of body and the producer's headers dropped: "
                    + rootMessage(e) + "; the record is in " + record.topic() + " partition " + record.partition()
                    + " offset " + record.offset() + " while its retention lasts");
            subscription.send(new ProducerRecord<>(dlt, null, record.key(), new byte[0],
                    deadLetterHeaders(stub, reason, attempts)));
            LOG.error("dead letter of topic={} partition={} offset={} message_id={} too large for {}: a stub without"
                    + " the body was dead-lettered ({})", record.topic(), record.partition(), record.offset(),
                    KafkaWire.printable(message.rawId()), dlt, rootMessage(e));
        }
        LOG.info("dead-lettered topic={} partition={} offset={} message_id={} attempts={} reason=\"{}\"",
                subscription.topic(), origin.partition(), origin.offset(), KafkaWire.printable(message.rawId()),
                attempts.size(), reason);
    }

    private RecordHeaders deadLetterHeaders(RecordHeaders headers, String reason, List<AttemptRecord> attempts) {
        stamp(headers);
        KafkaWire.put(headers, DeadLetterHeaders.REASON, reason);
        KafkaWire.put(headers, DeadLetterHeaders.ORIGIN_QUEUE, subscription.topic());
        KafkaWire.put(headers, AttemptHistory.HEADER, AttemptHistory.encode(attempts));
        KafkaWire.put(headers, DeadLetterHeaders.DEAD_LETTERED_AT, Instant.now().toString());
        return headers;
    }

    /** Errors no retry of the same write can get past: the record is too large or invalid for the broker. */
    static boolean permanent(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof RecordTooLargeException || c instanceof InvalidRecordException
                    || c instanceof RecordBatchTooLargeException || c instanceof SerializationException) {
                return true;
            }
        }
        return false;
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getClass().getSimpleName() + ": " + root.getMessage();
    }

    private void stamp(RecordHeaders headers) {
        if (message.rawId() != null) {
            KafkaWire.put(headers, KafkaWire.MESSAGE_ID, message.rawId());
        }
        KafkaWire.put(headers, KafkaWire.ORIGIN_PARTITION, Integer.toString(origin.partition()));
        KafkaWire.put(headers, KafkaWire.ORIGIN_OFFSET, Long.toString(origin.offset()));
    }

    /**
     * Gives the record back unless a settle is under way or done: it is handed out again (a partition rewound to it,
     * after a pause; a share group's record released). A settle called afterwards changes nothing.
     *
     * @return whether it was given back now
     */
    boolean abandon() {
        if (state.compareAndSet(OPEN, ABANDONED)) {
            settle.giveBack(this, REWIND_PAUSE);
            return true;
        }
        return false;
    }

    /** A settle that failed part-way: the record is given back (it comes again) and the caller sees the exception. */
    private void giveBack() {
        state.set(OPEN);
        abandon();
    }

    boolean settled() {
        int s = state.get();
        return s == SETTLED || s == ABANDONED;
    }

    long handedOutNanos() {
        return handedOutNanos;
    }

    /** @return false for a late settle of a delivery that was given back (logged, changes nothing) */
    private boolean begin() {
        if (state.compareAndSet(OPEN, SETTLING)) {
            return true;
        }
        if (state.get() == ABANDONED) {
            LOG.warn("topic={} partition={} offset={} settled after it was given back (settle timeout or a failed"
                    + " settle); it is handed out again, this settle changes nothing", record.topic(),
                    record.partition(), record.offset());
            return false;
        }
        throw new IllegalStateException("delivery of " + describe() + " was already settled");
    }

    private void done(Outcome outcome) {
        state.set(SETTLED);
        settle.settled(this, outcome);
    }

    private String describe() {
        return record.topic() + "-" + record.partition() + "@" + record.offset();
    }
}
