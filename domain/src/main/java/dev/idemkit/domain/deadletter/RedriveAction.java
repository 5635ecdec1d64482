package dev.idemkit.domain.deadletter;

/** What a redrive does with one dead letter. */
public enum RedriveAction {
    /** publish it back to its origin queue, with the approval recorded on it. */
    REPUBLISH,
    /** leave it: the inbox already holds its key as processed, republishing would be a duplicate. */
    SKIP_ALREADY_PROCESSED,
    /** leave it: it has no usable message id, so the inbox cannot protect a second run. */
    SKIP_NO_ID;

    /** The redrive decision for one dead letter. */
    public static RedriveAction decide(boolean hasValidId, boolean alreadyProcessed) {
        if (!hasValidId) {
            return SKIP_NO_ID;
        }
        return alreadyProcessed ? SKIP_ALREADY_PROCESSED : REPUBLISH;
    }
}
