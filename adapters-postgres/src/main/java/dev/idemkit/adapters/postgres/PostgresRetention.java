package dev.idemkit.adapters.postgres;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes processed inbox keys older than their TTL and expired Idempotency-Key records, in bounded
 * batches, each batch its own short transaction: no table lock, no unbounded DELETE, writers never
 * wait long. Meant to be called by the application's scheduler. Thread-safe.
 *
 * <p>One batch: {@link #PURGE_PROCESSED}, the oldest {@code n} keys before the cutoff through the index on
 * {@code processed_at}, deleted by row address.
 */
public final class PostgresRetention {
    private static final Logger LOG = LoggerFactory.getLogger(PostgresRetention.class);

    /**
     * The oldest keys first, through the index on {@code processed_at}, locked (a row another transaction holds is
     * left for the next batch), then deleted by their row addresses; run under {@link Sql#PURGE_PLANNER}. The age is
     * checked again on the rows deleted: a row address is unique only within one table, and in a table an operator
     * partitioned by age the same address can name a live key in another partition. Written as {@code IS TRUE} so
     * that it stays a filter on those rows instead of a second scan of the age index.
     */
    static final String PURGE_PROCESSED = """
            DELETE FROM processed_messages
            WHERE ctid = ANY (ARRAY(
                SELECT ctid FROM processed_messages
                WHERE processed_at < ?
                ORDER BY processed_at
                LIMIT ?
                FOR UPDATE SKIP LOCKED))
              AND (processed_at < ?) IS TRUE
            """;

    /** How many rows one run deleted. */
    public record Report(long processedMessages, long idempotencyRecords) {}

    private final PostgresDatabase db;
    private final PostgresIdempotencyRecords records;

    public PostgresRetention(PostgresDatabase db) {
        this.db = Objects.requireNonNull(db, "db");
        this.records = new PostgresIdempotencyRecords(db);
    }

    /**
     * Deletes inbox keys processed before {@code now - inboxTtl} and records expired on the database's clock,
     * {@code batchSize} rows per transaction, at most {@code maxBatches} batches of each kind.
     */
    public Report purge(Instant now, Duration inboxTtl, int batchSize, int maxBatches) {
        Objects.requireNonNull(now, "now");
        Objects.requireNonNull(inboxTtl, "inboxTtl");
        if (batchSize < 1 || maxBatches < 1 || inboxTtl.isNegative()) {
            throw new IllegalArgumentException("batch size and max batches must be positive and the TTL not negative");
        }
        long processed = 0;
        for (int i = 0; i < maxBatches; i++) {
            int n = purgeProcessedBatch(now.minus(inboxTtl), batchSize);
            processed += n;
            if (n < batchSize) {
                break;
            }
        }
        long expired = 0;
        for (int i = 0; i < maxBatches; i++) {
            int n = records.purgeExpired(batchSize);
            expired += n;
            if (n < batchSize) {
                break;
            }
        }
        LOG.info("retention deleted processed_messages={} idempotency_records={} (inbox ttl {})", processed, expired,
                inboxTtl);
        return new Report(processed, expired);
    }

    /** Deletes up to {@code batchSize} inbox keys processed before {@code cutoff}; returns how many. */
    public int purgeProcessedBatch(Instant cutoff, int batchSize) {
        return Sql.purgeBatch(db.dataSource(), "inbox retention", PURGE_PROCESSED, ps -> {
            Sql.setInstant(ps, 1, cutoff);
            ps.setInt(2, batchSize);
            Sql.setInstant(ps, 3, cutoff);
        });
    }
}
