package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.PostgresRetention;

/** Where the starter's retention reports each run: Micrometer when a registry is there, nothing otherwise. */
interface RetentionMeters {
    RetentionMeters NONE = new RetentionMeters() {
        @Override
        public void ran(PostgresRetention.Report report, PostgresRetention.Oldest oldest) {}

        @Override
        public void failed() {}
    };

    /** One run: what it deleted and the oldest rows it kept. */
    void ran(PostgresRetention.Report report, PostgresRetention.Oldest oldest);

    /** A run that failed (the database, a missing right): it did not catch up. */
    void failed();
}
