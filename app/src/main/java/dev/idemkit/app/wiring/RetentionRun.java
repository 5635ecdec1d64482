package dev.idemkit.app.wiring;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What one retention run of the store did: the rows it deleted per table, the age of the oldest inbox key it kept (how
 * far back the dedup window reaches now), whether it caught up, and a line for the log.
 */
public record RetentionRun(Map<String, Long> deleted, Optional<Duration> oldestInboxKey, boolean caughtUp,
        String summary) {
    public RetentionRun {
        deleted = Map.copyOf(deleted);
        Objects.requireNonNull(oldestInboxKey, "oldestInboxKey");
        Objects.requireNonNull(summary, "summary");
    }

    /** A store that expires its keys itself (Redis' TTL): nothing to delete. */
    static RetentionRun nothingToDo(String why) {
        return new RetentionRun(Map.of(), Optional.empty(), true, why);
    }
}
