package dev.idemkit.adapters.postgres;

import dev.idemkit.ports.out.OutboxMaintenance;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * The counts and the retention of {@code outbox_messages} ({@link OutboxMaintenance}): sent rows deleted in small
 * batches that skip rows another transaction holds, never an unsent one. Thread-safe.
 */
final class PostgresOutboxMaintenance implements OutboxMaintenance {
    static final String STATS = """
            SELECT count(*) FILTER (WHERE parked_at IS NULL), count(*) FILTER (WHERE parked_at IS NOT NULL),
                   min(appended_at) FILTER (WHERE parked_at IS NULL)
            FROM outbox_messages WHERE sent_at IS NULL
            """;
    /** As the inbox's purge ({@link PostgresRetention#PURGE_PROCESSED}): oldest first, through the sent rows' index, the age checked again on the rows deleted. */
    static final String PURGE_SENT = """
            DELETE FROM outbox_messages
            WHERE ctid = ANY (ARRAY(
                SELECT ctid FROM outbox_messages
                WHERE sent_at < ?
                ORDER BY sent_at
                LIMIT ?
                FOR UPDATE SKIP LOCKED))
              AND (sent_at < ?) IS TRUE
            """;


    private final DataSource dataSource;

    PostgresOutboxMaintenance(DataSource dataSource) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    @Override
    public Stats stats(Instant now) {
        return Sql.inTransaction(dataSource, "outbox stats", c -> {
            try (PreparedStatement ps = c.prepareStatement(STATS); ResultSet rs = ps.executeQuery()) {
                rs.next();
                Instant oldest = Sql.instant(rs, 3);
                return new Stats(rs.getLong(1), rs.getLong(2), Optional.ofNullable(oldest)
                        .map(t -> t.isBefore(now) ? Duration.between(t, now) : Duration.ZERO));
            }
        });
    }

    @Override
    public long purgeSent(Instant before, int batch, int maxBatches) {
        if (batch < 1 || maxBatches < 1) {
            throw new IllegalArgumentException("batch and max batches must be positive");
        }
        long total = 0;
        for (int i = 0; i < maxBatches; i++) {
            int n = purgeSentBatch(dataSource, before, batch);
            total += n;
            if (n < batch) {
                break;
            }
        }
        return total;
    }

    /** One batch of {@link #PURGE_SENT}: up to {@code batch} rows sent before {@code before}; how many it deleted. */
    static int purgeSentBatch(DataSource dataSource, Instant before, int batch) {
        return Sql.purgeBatch(dataSource, "outbox retention", PURGE_SENT, ps -> {
            Sql.setInstant(ps, 1, before);
            ps.setInt(2, batch);
            Sql.setInstant(ps, 3, before);
        });
    }
}
