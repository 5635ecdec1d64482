package dev.idemkit.app.crash;

import java.util.EnumSet;
import java.util.Set;

/**
 * The named moments of a settle path at which the crash harness SIGKILLs the consumer's JVM (docs/ARCHITECTURE.md section 12).
 * Each point is reached in the real code: in the consumer's handler, in a delivery the harness wraps, or, inside the
 * adapters, where the {@link CrashAgent} stops a thread right after one broker call and before the next.
 */
public enum CrashPoint {
    /** The handler was called; the effect has not written anything. */
    BEFORE_EFFECT(EnumSet.allOf(Combination.class)),
    /** The effect wrote through the unit of work; nothing is committed. */
    INSIDE_EFFECT(EnumSet.allOf(Combination.class)),
    /** The key and the effect committed; the delivery is not acknowledged yet. */
    AFTER_COMMIT_BEFORE_ACK(EnumSet.allOf(Combination.class)),
    /**
     * A retry's copy is confirmed in its retry queue (Kafka: retry topic); the original is not acknowledged (Kafka: its
     * offset is not settled; a share group: not accepted). SQS retries in place.
     */
    RETRY_REPUBLISHED_BEFORE_ACK(EnumSet.of(Combination.PG_RABBIT, Combination.REDIS_RABBIT, Combination.PG_KAFKA,
            Combination.PG_KAFKA_DB, Combination.PG_KAFKA_SHARE)),
    /** A dead letter's copy is confirmed on its way to the DLQ; the original is not removed. */
    DEAD_LETTERED_BEFORE_REMOVAL(EnumSet.allOf(Combination.class)),
    /** A redrive's copy is confirmed in the work queue; the dead letter is not removed from the DLQ. */
    REDRIVE_PUBLISHED_BEFORE_REMOVAL(EnumSet.allOf(Combination.class)),
    /** SIGTERM was sent and the consumer is closing (deliveries settling); SIGKILL lands during that. */
    DURING_SHUTDOWN(EnumSet.allOf(Combination.class)),
    /**
     * The PostgreSQL inbox's transaction committed (keys, effects and, with offsets in the database, the positions),
     * returned from the store, nothing settled with the broker yet: {@code serve} killed there
     * ({@code KafkaOffsetsInDatabaseIT}, woven by {@link CrashAgent}).
     */
    AFTER_COMMIT_IN_STORE(EnumSet.noneOf(Combination.class)),
    /** The outbox relay holds its rows and is about to publish one (the relay's points: {@link OutboxCrashIT}). */
    OUTBOX_BEFORE_PUBLISH(EnumSet.noneOf(Combination.class)),
    /** The broker confirmed an outbox row; the relay has not marked it sent. */
    OUTBOX_PUBLISHED_BEFORE_MARK(EnumSet.noneOf(Combination.class)),
    /**
     * The outbox relay's pass has written the third row of one key in a row, with no confirm awaited between them (key
     * window 4), beside other keys' rows: some confirmed, some not, none marked.
     */
    OUTBOX_PIPELINE_IN_FLIGHT(EnumSet.noneOf(Combination.class)),
    /**
     * The outbox relay's pass has written outcomes (rows marked sent) in its transaction and was just handed more rows
     * while it goes on publishing: nothing of the pass committed (the pass's store thread stops there).
     */
    OUTBOX_RECORDED_BEFORE_COMMIT(EnumSet.noneOf(Combination.class)),
    /**
     * The payments API charged (the ledger returned the payment); the response is not stored with the Idempotency-Key
     * and the claim not ended (the payments API's points: {@link PaymentsCrashIT}).
     */
    PAYMENT_CHARGED_BEFORE_STORED(EnumSet.noneOf(Combination.class)),
    /** The Idempotency-Key record's completion returned; the client has no answer yet. */
    PAYMENT_STORED_BEFORE_ANSWER(EnumSet.noneOf(Combination.class));

    private final Set<Combination> combinations;

    CrashPoint(Set<Combination> combinations) {
        this.combinations = combinations;
    }

    /** Whether the consumer's path through this point exists on that combination (the relay's points: none). */
    public boolean appliesTo(Combination c) {
        return combinations.contains(c);
    }
}
