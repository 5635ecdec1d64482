package dev.idemkit.adapters.postgres;

/**
 * The batched inbox's statements as the store sends them ({@link InboxBatch}'s, package-private there), for the
 * benchmarks that replay them with pgbench.
 */
public final class InboxBatchSql {
    /** The batch's keys inserted if absent in one statement; three {@code ?::text[]}: consumers, ids, fingerprints. */
    public static final String INSERT_KEYS = InboxBatch.INSERT_KEYS;
    /** The fingerprints of the keys that conflicted; two {@code ?::text[]}: consumers, ids. */
    public static final String SELECT_FINGERPRINTS = InboxBatch.SELECT_FINGERPRINTS;

    private InboxBatchSql() {}
}
