package dev.idemkit.adapters.postgres;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.out.IdempotencyRecords;
import dev.idemkit.ports.out.StoreUnavailableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Idempotency-Key records in table {@code idempotency_records}, keyed by (client_id, idem_key).
 *
 * <p>Atomic step of {@link #tryBegin}: {@code INSERT ... ON CONFLICT (client_id, idem_key) DO UPDATE
 * ... WHERE expires_at <= clock_timestamp() RETURNING ...}: it claims the key when absent or expired and does
 * nothing when a live record exists (which is then read and returned). Every time is the database's own
 * ({@code clock_timestamp()}): created, expires, and every comparison, so callers whose clocks differ
 * agree on what expired. {@link #renew}, {@link #complete} and {@link #release} act only on the very
 * in-progress claim the caller holds (its fence): a claim whose lease lapsed but that nobody took over is still
 * the caller's, so a late completion stores its result instead of turning a finished request into a retry. Instants
 * are kept to the microsecond. Thread-safe.
 */
public final class PostgresIdempotencyRecords implements IdempotencyRecords {
    private static final Logger LOG = LoggerFactory.getLogger(PostgresIdempotencyRecords.class);
    private static final int VANISHED_RETRIES = 3;

    static final String CLAIM = """
            INSERT INTO idempotency_records AS r
                (client_id, idem_key, fingerprint, fence, state, status, headers, body, created_at, expires_at)
            SELECT ?, ?, ?, ?, 'in_progress', NULL, NULL, NULL, t.now, t.now + ? * interval '1 millisecond'
            FROM (SELECT clock_timestamp() AS now) AS t
            ON CONFLICT (client_id, idem_key) DO UPDATE
            SET fingerprint = excluded.fingerprint, fence = excluded.fence, state = 'in_progress', status = NULL,
                headers = NULL, body = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at
            WHERE r.expires_at <= clock_timestamp()
            RETURNING created_at, expires_at
            """;
    static final String RENEW = """
            UPDATE idempotency_records SET expires_at = clock_timestamp() + ? * interval '1 millisecond'
            WHERE client_id = ? AND idem_key = ? AND state = 'in_progress' AND fence = ?
            """;
    static final String COMPLETE = """
            UPDATE idempotency_records
            SET state = 'completed', status = ?, headers = jsonb_object(?::text[], ?::text[]), body = ?,
                expires_at = clock_timestamp() + ? * interval '1 millisecond'
            WHERE client_id = ? AND idem_key = ? AND state = 'in_progress' AND fence = ?
            """;
    static final String RELEASE = """
            DELETE FROM idempotency_records
            WHERE client_id = ? AND idem_key = ? AND state = 'in_progress' AND fence = ?
            """;
    /**
     * The oldest expired records through the index on {@code expires_at}, locked, deleted by row address; run under
     * {@link Sql#PURGE_PLANNER}. The statement's start time is the cutoff: {@code clock_timestamp()} is volatile, so
     * the index scan could not stop at it and would read every record's entry whenever fewer than the batch expired.
     * A record the statement locked cannot be renewed before it is deleted; the expiry is checked again on the rows
     * deleted, as in {@link PostgresRetention#PURGE_PROCESSED}.
     */
    static final String PURGE = """
            DELETE FROM idempotency_records
            WHERE ctid = ANY (ARRAY(
                SELECT ctid FROM idempotency_records
                WHERE expires_at <= statement_timestamp()
                ORDER BY expires_at
                LIMIT ?
                FOR UPDATE SKIP LOCKED))
              AND (expires_at <= statement_timestamp()) IS TRUE
            """;

    private final PostgresDatabase db;

    public PostgresIdempotencyRecords(PostgresDatabase db) {
        this.db = Objects.requireNonNull(db, "db");
    }

    @Override
    public Begin tryBegin(ScopedKey key, Fingerprint fingerprint, String fence, Duration lease) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(lease, "lease");
        for (int attempt = 1; attempt <= VANISHED_RETRIES; attempt++) {
            Optional<Begin> result = Sql.inTransaction(db.dataSource(), "idempotency claim",
                    c -> claimOrRead(c, key, fingerprint, fence, lease));
            if (result.isPresent()) {
                LOG.debug("idempotency client={} key={} decision={}", key.client(), key.key(),
                        result.get() instanceof Begin.Claimed ? "claimed" : "held");
                return result.get();
            }
        }
        throw new StoreUnavailableException("idempotency record " + key + " kept conflicting yet vanishing", null);
    }

    /**
     * Claims in the given transaction, or reads the live record.
     *
     * @return empty when the record vanished (expired or deleted) between the claim and the read: try again
     */
    static Optional<Begin> claimOrRead(Connection c, ScopedKey key, Fingerprint fingerprint, String fence,
            Duration lease) throws SQLException {
        KeyRecord.InProgress wanted = new KeyRecord.InProgress(fingerprint, java.time.Instant.EPOCH,
                java.time.Instant.EPOCH, fence); // validates the fence before any SQL
        try (PreparedStatement ps = c.prepareStatement(CLAIM)) {
            IdempotencyRows.bindKey(ps, 1, key);
            ps.setString(3, fingerprint.hex());
            ps.setString(4, wanted.fence());
            ps.setLong(5, lease.toMillis());
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    return Optional.of(new Begin.Claimed(new KeyRecord.InProgress(fingerprint, Sql.instant(rs, 1),
                            Sql.instant(rs, 2), fence)));
                }
            }
        }
        return IdempotencyRows.find(c, key).map(Begin.Held::new);
    }

    @Override
    public boolean renew(ScopedKey key, KeyRecord.InProgress claim, Duration lease) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(claim, "claim");
        return Sql.inTransaction(db.dataSource(), "idempotency renew", c -> {
            try (PreparedStatement ps = c.prepareStatement(RENEW)) {
                ps.setLong(1, lease.toMillis());
                IdempotencyRows.bindKey(ps, 2, key);
                ps.setString(4, claim.fence());
                return ps.executeUpdate() == 1;
            }
        });
    }

    @Override
    public boolean complete(ScopedKey key, KeyRecord.InProgress claim, StoredResponse response, Duration ttl) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(claim, "claim");
        Objects.requireNonNull(response, "response");
        boolean stored = Sql.inTransaction(db.dataSource(), "idempotency complete",
                c -> complete(c, key, claim, response, ttl));
        LOG.debug("idempotency client={} key={} completed status={} stored={}", key.client(), key.key(),
                response.status(), stored);
        return stored;
    }

    static boolean complete(Connection c, ScopedKey key, KeyRecord.InProgress claim, StoredResponse response,
            Duration ttl) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(COMPLETE)) {
            ps.setInt(1, response.status());
            IdempotencyRows.bindHeaders(c, ps, 2, response.headers());
            ps.setBytes(4, response.body());
            ps.setLong(5, ttl.toMillis());
            IdempotencyRows.bindKey(ps, 6, key);
            ps.setString(8, claim.fence());
            return ps.executeUpdate() == 1;
        }
    }

    @Override
    public void release(ScopedKey key, KeyRecord.InProgress claim) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(claim, "claim");
        int n = Sql.inTransaction(db.dataSource(), "idempotency release", c -> {
            try (PreparedStatement ps = c.prepareStatement(RELEASE)) {
                IdempotencyRows.bindKey(ps, 1, key);
                ps.setString(3, claim.fence());
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
    public int purgeExpired(int batchSize) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batch size must be positive, got " + batchSize);
        }
        int n = Sql.purgeBatch(db.dataSource(), "idempotency purge", PURGE, ps -> ps.setInt(1, batchSize));
        LOG.debug("idempotency purged {} expired records", n);
        return n;
    }
}
