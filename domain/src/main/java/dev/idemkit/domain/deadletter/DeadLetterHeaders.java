package dev.idemkit.domain.deadletter;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The one vocabulary of idemkit's own dead-letter and redrive headers, the same on every transport (RabbitMQ
 * headers, SQS message attributes, the in-memory reference). A transport writes them when it dead-letters or
 * redrives and trusts them only where it wrote them: on a message a producer published, they are data.
 */
public final class DeadLetterHeaders {
    /** Every failed attempt so far, encoded by {@link AttemptHistory#encode}. */
    public static final String ATTEMPTS = "x-idemkit-attempts";
    /** Why the message was dead-lettered. */
    public static final String REASON = "x-idemkit-dead-letter-reason";
    /** The queue the message was consumed from when it failed. */
    public static final String ORIGIN_QUEUE = "x-idemkit-origin-queue";
    /** When it was dead-lettered (ISO-8601). */
    public static final String DEAD_LETTERED_AT = "x-idemkit-dead-lettered-at";
    /** The dead letter's id in its queue. */
    public static final String DEAD_LETTER_ID = "x-idemkit-dead-letter-id";
    /** On a redriven message: who approved the redrive. */
    public static final String REDRIVE_APPROVED_BY = "x-idemkit-redrive-approved-by";
    /** On a redriven message: why. */
    public static final String REDRIVE_REASON = "x-idemkit-redrive-reason";
    /** On a redriven message: when it was approved (ISO-8601). */
    public static final String REDRIVE_APPROVED_AT = "x-idemkit-redrive-approved-at";
    /** On a redriven message: the reason it had been dead-lettered for. */
    public static final String PREVIOUS_REASON = "x-idemkit-previous-dead-letter-reason";

    /** The headers that describe a dead letter; a redriven copy carries none of them. */
    public static final Set<String> DEAD_LETTER = Set.of(ATTEMPTS, REASON, ORIGIN_QUEUE, DEAD_LETTERED_AT,
            DEAD_LETTER_ID);

    private DeadLetterHeaders() {}

    /** The headers a redrive adds to the republished message: the approval, and the reason it had been dead. */
    public static Map<String, String> redrive(Approval approval, Optional<String> previousReason) {
        Map<String, String> h = new LinkedHashMap<>();
        h.put(REDRIVE_APPROVED_BY, approval.approvedBy());
        h.put(REDRIVE_REASON, approval.reason());
        h.put(REDRIVE_APPROVED_AT, approval.at().toString());
        previousReason.ifPresent(r -> h.put(PREVIOUS_REASON, r));
        return h;
    }
}
