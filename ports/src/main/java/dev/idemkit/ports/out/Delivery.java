package dev.idemkit.ports.out;

import dev.idemkit.domain.Message;
import dev.idemkit.domain.deadletter.AttemptRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One delivery of a message by a transport. Exactly one of {@link #ack}, {@link #retryAfter} or
 * {@link #deadLetter} must be called; until then the broker still holds the message, so a crash
 * loses nothing (it comes back). Settling methods may be called from any thread.
 */
public interface Delivery {

    Message message();

    /** Which attempt this is, counting from 1 (the first delivery). */
    int attempt();

    /** The failed attempts before this one, oldest first, as they travelled with the message. */
    List<AttemptRecord> history();

    /** The broker's "redelivered" flag: a metric, never a dedup decision. */
    boolean redelivered();

    /** Done: remove the message from the queue. */
    void ack();

    /**
     * Schedule attempt {@code attempt() + 1} after {@code delay} without blocking this thread or any
     * other delivery; the message is kept by the broker while it waits. {@code failed} is appended to
     * the history that travels with it.
     */
    void retryAfter(Duration delay, AttemptRecord failed);

    /**
     * Move the message, untouched, to the dead-letter queue with {@code reason}, its history and
     * {@code failed} as the last attempt.
     */
    void deadLetter(String reason, AttemptRecord failed);

    /**
     * How the transport acknowledges this delivery together with others, or empty (the default): {@link #ackAll} then
     * acks it on its own. A wrapper that overrides {@link #ack} must not pass its delegate's on unchanged.
     */
    default Optional<BulkAck> bulkAck() {
        return Optional.empty();
    }

    /**
     * Acknowledges every one of {@code deliveries}, as {@link #ack} on each would, in as few broker operations as
     * their transports allow (RabbitMQ: one {@code multiple} ack per channel where that is safe). Each must be
     * unsettled; one that was not is reported by an {@link IllegalStateException} after the others are acked.
     */
    static void ackAll(List<? extends Delivery> deliveries) {
        Map<BulkAck, List<Delivery>> groups = new IdentityHashMap<>();
        RuntimeException failure = null;
        for (Delivery d : deliveries) {
            Optional<BulkAck> bulk;
            try {
                bulk = d.bulkAck();
            } catch (RuntimeException e) {
                bulk = Optional.empty(); // acked on its own below
            }
            if (bulk.isPresent()) {
                groups.computeIfAbsent(bulk.get(), b -> new ArrayList<>()).add(d);
                continue;
            }
            try {
                d.ack();
            } catch (RuntimeException e) {
                failure = failure == null ? e : failure;
            }
        }
        for (Map.Entry<BulkAck, List<Delivery>> group : groups.entrySet()) {
            try {
                group.getKey().ackAll(group.getValue());
            } catch (RuntimeException e) {
                failure = failure == null ? e : failure;
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Where this delivery's partition stands once it and {@code settledTogether} (which may include it) are settled
     * by the commit the position is written in: every record before the position is then settled. Empty (the
     * default) for a transport without positions, or with them off. A wrapper that does not pass this on keeps
     * positions from being written, which is safe.
     */
    default Optional<LogPosition> positionAfter(List<? extends Delivery> settledTogether) {
        return Optional.empty();
    }

    /**
     * The positions of every partition among {@code deliveries} once all of them are settled, one per partition (the
     * highest, when several deliveries of one partition answer): what a store that keeps positions writes in the
     * transaction whose commit settles them.
     */
    static List<LogPosition> positionsAfter(List<? extends Delivery> deliveries) {
        List<LogPosition> positions = new ArrayList<>();
        for (Delivery d : deliveries) {
            Optional<LogPosition> p;
            try {
                p = d.positionAfter(deliveries);
            } catch (RuntimeException e) {
                continue; // no position is written for it: safe, the consumer's own commit covers it later
            }
            if (p.isEmpty()) {
                continue;
            }
            boolean merged = false;
            for (int i = 0; i < positions.size(); i++) {
                LogPosition known = positions.get(i);
                if (known.samePartition(p.get())) {
                    if (p.get().next() > known.next()) {
                        positions.set(i, p.get());
                    }
                    merged = true;
                    break;
                }
            }
            if (!merged) {
                positions.add(p.get());
            }
        }
        return positions;
    }

    /** A transport's way of acknowledging several of its deliveries at once. */
    interface BulkAck {
        /**
         * Acks {@code deliveries}, each of whose {@link Delivery#bulkAck} is this, as {@link Delivery#ack} on each
         * would; one already settled is reported by an {@link IllegalStateException} after the others are acked.
         */
        void ackAll(List<? extends Delivery> deliveries);
    }
}
