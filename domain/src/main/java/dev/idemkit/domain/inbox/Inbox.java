package dev.idemkit.domain.inbox;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.Transition;
import java.util.Optional;

/**
 * The inbox decision as a pure function. A store calls {@link #decide} after its atomic
 * insert-if-absent: an absent key means the effect runs; a present key with the same fingerprint is a
 * redelivery; a present key with another fingerprint is a producer reusing an id, which is rejected
 * (dead-lettered), never silently dropped.
 */
public final class Inbox {
    /** The reason given when a message id comes back with a different body. */
    public static final String REUSED_ID = "message id reused with a different payload";

    private Inbox() {}

    /**
     * @param recorded the fingerprint already recorded for the key, empty when the key is new
     * @param incoming the fingerprint of the delivery at hand
     * @return PROCESSED (run the effect), DUPLICATE, or REJECTED with {@link #REUSED_ID}
     */
    public static Outcome decide(Optional<Fingerprint> recorded, Fingerprint incoming) {
        if (recorded.isEmpty()) {
            return Outcome.PROCESSED;
        }
        return recorded.get().equals(incoming) ? Outcome.DUPLICATE : Outcome.rejected(REUSED_ID);
    }

    /** Applies one delivery: records its key when new, leaves the state alone otherwise. */
    public static Transition<InboxState> apply(InboxState state, InboxDelivery delivery) {
        Outcome outcome = decide(state.fingerprintOf(delivery.key()), delivery.fingerprint());
        InboxState next = outcome.effectRan() ? state.with(delivery.key(), delivery.fingerprint()) : state;
        return new Transition<>(next, outcome);
    }
}
