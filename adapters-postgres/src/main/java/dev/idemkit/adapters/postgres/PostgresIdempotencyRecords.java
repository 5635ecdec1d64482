package dev.idemkit.adapters.postgres;

import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.ports.out.IdempotencyRecords;
import dev.idemkit.ports.out.StoreUnavailableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Idempotency-Key records in table {@code idempotency_records}, keyed by (client_id, idem_key).
 *
 * <p>Atomic step of {@link #tryBegin}: {@code INSERT ... ON CONFLICT (client_id, idem_key) DO UPDATE
 * ... WHERE expires_at <= now}: it claims the key when absent or expired and does nothing when a live
 * record exists (which is then read and returned). {@link #complete} and {@link #release} act only on
 * the very in-progress record the caller holds (same fingerprint and creation time). Instants are
 * kept to the microsecond. Thread-safe.
 */
public final class PostgresIdempotencyRecords implements IdempotencyRecords {
    private static final Logger LOG = LoggerFactory.getLogger(PostgresIdempotencyRecords.class);
    private static final int VANISHED_RETRIES = 3;

    static final String CLAIM = """
            INSERT INTO idempotency_records AS r
                (client_id, idem_key, fingerprint, state, status, headers, body, created_at, expires_at)
            VALUES (?, ?, ?, 'in_progress', NULL, NULL, NULL, ?, ?)
            ON CONFLICT (client_id, idem_key) DO UPDATE
            SET fingerprint = excluded.fingerprint, state = 'in_progress', status = NULL, headers = NULL,
                body = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at
            WHERE r.expires_at <= ?
            """;
    static final String COMPLETE = """
            UPDATE idempotency_records
            SET state = 'completed', status = ?, headers = jsonb_object(?::text[], ?::text[]), body = ?,
                expires_at = ?
            WHERE client_id = ? AND idem_key = ? AND state = 'in_progress' AND fingerprint = ? AND created_at = ?
            """;
    static final String RELEASE = """
            DELETE FROM idempotency_records
            WHERE client_id = ? AND idem_key = ? AND state = 'in_progress' AND fingerprint = ? AND created_at = ?
            """;
    static final String PURGE = """
            DELETE FROM idempotency_records
            WHERE (client_id, idem_key) IN (
                SELECT client_id, idem_key FROM idempotency_records
                WHERE expires_at <= ?
                LIMIT ?
                FOR UPDATE SKIP LOCKED)
              AND expires_at <= ?
            """;

    private final PostgresDatabase db;

    public PostgresIdempotencyRecords(PostgresDatabase db) {
        this.db = Objects.requireNonNull(db, "db");
    }

    @Override
    public Optional<KeyRecord> tryBegin(ScopedKey key, KeyRecord.InProgress running, Instant now) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(running, "running");
        Objects.requireNonNull(now, "now");
        for (int attempt = 1; attempt <= VANISHED_RETRIES; attempt++) {
            Optional<Optional<KeyRecord>> result = Sql.inTransaction(db.dataSource(), "idempotency claim",
                    c -> claimOrRead(c, key, running, now));
            if (result.isPresent()) {
                LOG.debug("idempotency client={} key={} decision={}", key.client(), key.key(),
                        result.get().isEmpty() ? "claimed" : "held");
                return result.get();
            }
        }
        throw new StoreUnavailableException("idempotency record " + key + " kept conflicting yet vanishing", null);
    }

    /**
     * Claims in the given transaction, or reads the live record.
     *
     * @return empty when the record vanished between the claim and the read (try again); otherwise
     *     empty-inside when claimed, or the live record
     */
    static Optional<Optional<KeyRecord>> claimOrRead(Connection c, ScopedKey key, KeyRecord.InProgress running,
            Instant now) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(CLAIM)) {
            IdempotencyRows.bindKey(ps, 1, key);
            ps.setString(3, running.fingerprint().hex());
            Sql.setInstant(ps, 4, running.createdAt());
            Sql.setInstant(ps, 5, running.expiresAt());
            Sql.setInstant(ps, 6, now);
            if (ps.executeUpdate() == 1) {
                return Optional.of(Optional.empty());
            }
        }
        Optional<KeyRecord> live = IdempotencyRows.find(c, key);
        return live.isEmpty() ? Optional.empty() : Optional.of(live);
    }

    @Override
    public boolean complete(ScopedKey key, KeyRecord.Completed done) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(done, "done");
        boolean stored = Sql.inTransaction(db.dataSource(), "idempotency complete", c -> complete(c, key, done));
        LOG.debug("idempotency client={} key={} completed status={} stored={}", key.client(), key.key(),
                done.response().status(), stored);
        return stored;
    }

    static boolean complete(Connection c, ScopedKey key, KeyRecord.Completed done) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(COMPLETE)) {
            ps.setInt(1, done.response().status());
            IdempotencyRows.bindHeaders(c, ps, 2, done.response().headers());
            ps.setBytes(4, done.response().body());
            Sql.setInstant(ps, 5, done.expiresAt());
            IdempotencyRows.bindKey(ps, 6, key);
            ps.setString(8, done.fingerprint().hex());
            Sql.setInstant(ps, 9, done.createdAt());
            return ps.executeUpdate() == 1;
        }
    }

    @Override
    public void release(ScopedKey key, KeyRecord.InProgress running) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(running, "running");
        int n = Sql.inTransaction(db.dataSource(), "idempotency release", c -> {
            try (PreparedStatement ps = c.prepareStatement(RELEASE)) {
                IdempotencyRows.bindKey(ps, 1, key);
                ps.setString(3, running.fingerprint().hex());
                Sql.setInstant(ps, 4, running.createdAt());
                return ps.executeUpdate();
            }
        });
        LOG.debug("idempotency client={} key={} released={}", key.client(), key.key(), n == 1);
    }

    @Override
    public Optional<KeyRecord> find(ScopedKey key) {
        Objects.requireNonNull(key, "key");
        return Sql.inTransaction(db.dataSource(), "idempotency read", c -> IdempotencyRows.find(c, key));
    }

    @Override
    public int purgeExpired(Instant now, int batchSize) {
        Objects.requireNonNull(now, "now");
        if (batchSize < 1) {
            throw new IllegalArgumentException("batch size must be positive, got " + batchSize);
        }
        int n = Sql.inTransaction(db.dataSource(), "idempotency purge", c -> {
            try (PreparedStatement ps = c.prepareStatement(PURGE)) {
                Sql.setInstant(ps, 1, now);
                ps.setInt(2, batchSize);
                Sql.setInstant(ps, 3, now);
                return ps.executeUpdate();
            }
        });
        LOG.debug("idempotency purged {} expired records", n);
        return n;
    }
}
