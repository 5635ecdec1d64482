package dev.idemkit.ports.out;

/** What a store guarantees about effects (docs/ARCHITECTURE.md section 3). */
public enum Guarantee {
    /** key and effect commit or roll back together in one durable transaction. */
    EXACTLY_ONCE_EFFECT("exactly-once effect: key and effect commit or roll back together"),
    /** key and effect commit together, but the store may forget (e.g. Redis without persistence). */
    EXACTLY_ONCE_WITHIN_STORE_DURABILITY(
            "exactly-once effect within the store's durability (a store without persistence forgets on restart)"),
    /** the effect lives elsewhere: a crash between effect and record reprocesses. */
    DUPLICATES_REDUCED("duplicates reduced, not excluded: a crash between effect and record reprocesses;"
            + " make the effect itself idempotent (upsert, versioned)");

    private final String description;

    Guarantee(String description) {
        this.description = description;
    }

    public String description() {
        return description;
    }
}
