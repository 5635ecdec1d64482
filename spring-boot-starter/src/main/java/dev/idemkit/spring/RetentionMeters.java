package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.PostgresRetention;
import java.time.Instant;

/** Where the starter's retention reports each run: Micrometer when a registry is there, nothing otherwise. */
interface RetentionMeters {
    RetentionMeters NONE = (report, oldest, now) -> {};

    /** One run: what it deleted, the oldest rows it kept, at {@code now}. */
    void ran(PostgresRetention.Report report, PostgresRetention.Oldest oldest, Instant now);
}
