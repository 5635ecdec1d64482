package dev.idemkit.ports.out;

import dev.idemkit.domain.Message;
import dev.idemkit.domain.deadletter.AttemptRecord;
import java.time.Duration;
import java.util.List;

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
}
