package dev.idemkit.domain.deadletter;

/** What a redrive does with one dead letter. */
public enum RedriveAction {
    /** publish it back to its origin queue, with the approval recorded on it. */
    REPUBLISH,
    /** leave it: the inbox already holds its key as processed, republishing would be a duplicate. */
    SKIP_ALREADY_PROCESSED,
    /** leave it: it has no usable message id, so the inbox cannot protect a second run. */
    SKIP_NO_ID,
    /**
     * leave it: it is older than the dedup window, so the inbox may have purged its key and an effect that
     * already ran could run again; a second approval lets it through.
     */
    SKIP_PAST_WINDOW;

    /**
     * The redrive decision for one dead letter.
     *
     * @param withinWindow whether the dead letter is younger than the dedup window ({@link RedriveWindow})
     * @param pastWindowApproved whether the request carries the second approval for older ones
     */
    public static RedriveAction decide(boolean hasValidId, boolean alreadyProcessed, boolean withinWindow,
            boolean pastWindowApproved) {
        if (!hasValidId) {
            return SKIP_NO_ID;
        }
        if (alreadyProcessed) {
            return SKIP_ALREADY_PROCESSED;
        }
        return withinWindow || pastWindowApproved ? REPUBLISH : SKIP_PAST_WINDOW;
    }
}
