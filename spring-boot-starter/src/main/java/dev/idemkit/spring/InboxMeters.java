package dev.idemkit.spring;

import dev.idemkit.domain.Outcome;

/** Where the starter reports what it decided: Micrometer when a registry is there, nothing otherwise. */
interface InboxMeters {
    InboxMeters NONE = new InboxMeters() {
        @Override
        public void outcome(String consumer, Outcome outcome) {}

        @Override
        public void deadLettered(String queue) {}
    };

    void outcome(String consumer, Outcome outcome);

    void deadLettered(String queue);

    /** "processed", "duplicate", "stale" or "rejected": a tag value of bounded cardinality. */
    static String name(Outcome outcome) {
        if (outcome.effectRan()) {
            return "processed";
        }
        if (outcome instanceof Outcome.Rejected) {
            return "rejected";
        }
        return outcome == Outcome.STALE ? "stale" : "duplicate";
    }
}
