package dev.idemkit.adapters.postgres;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.IdempotencyClaims;
import dev.idemkit.ports.out.IdempotencyRecords.Begin;
import dev.idemkit.ports.out.StoreUnavailableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * The Idempotency-Key flow's atomic step on PostgreSQL, with the request's effect in the SAME transaction as its
 * claim, so that key, effect and stored response commit (or roll back) together: exactly once for an effect in this
 * database.
 *
 * <p>The claim {@code INSERT ... ON CONFLICT (client_id, idem_key) DO UPDATE ... WHERE expires_at <= now} is held
 * uncommitted while the effect runs, so no lease can lapse under a running request. A concurrent same-key attempt
 * blocks on that row; when the first commits it reads the completed record ({@link Attempt.Held}), when the first
 * rolls back (5xx or exception) it claims and runs itself. The wait is bounded by {@code lock_timeout} = the time the
 * flow has left ({@link Attempt.Busy} past it). A completed record is read first with one plain lock-free query (the
 * claim's {@code ON CONFLICT DO UPDATE} locks the row even when its {@code WHERE} fails), so replays of one key run in
 * parallel instead of queueing on the row. Each waiting attempt holds a pooled connection: size the pool above the
 * expected same-key concurrency. Every time is the database's own. Thread-safe.
 */
public final class PostgresIdempotencyClaims implements IdempotencyClaims<JpaUnitOfWork> {
    private static final String LOCK_NOT_AVAILABLE = "55P03";
    static final String SET_LOCK_TIMEOUT = "SELECT set_config('lock_timeout', ?, true)";
    static final String SWAP_LOCK_TIMEOUT = "WITH previous AS MATERIALIZED (SELECT current_setting('lock_timeout') AS v)"
            + " SELECT v, set_config('lock_timeout', ?, true) FROM previous";

    private final PostgresDatabase db;

    public PostgresIdempotencyClaims(PostgresDatabase db) {
        this.db = Objects.requireNonNull(db, "db");
    }

    @Override
    public Attempt attempt(ScopedKey key, Fingerprint fingerprint, KeyPolicy policy, Duration wait,
            Effect<? super JpaUnitOfWork, StoredResponse> effect) {
        long deadline = System.nanoTime() + wait.toNanos();
        // the wait for a pooled connection counts against the bound, for this read as for the claim
        Optional<KeyRecord> committed = Transactions.run(db, "idempotency read", java.util.OptionalLong.of(deadline),
                unit -> IdempotencyRows.find(unit.rawConnection(), key));
        if (committed.isPresent() && committed.get() instanceof KeyRecord.Completed) {
            return new Attempt.Held(committed.get());
        }
        // past the bound, a 503 that says so, not after the pool's own 30 s
        return Transactions.run(db, "idempotent request", java.util.OptionalLong.of(deadline),
                unit -> claimAndRun(unit, key, fingerprint, policy, deadline, effect));
    }

    /** How a claim's transaction runs the request's effect and gives up its work, in either kind of store. */
    interface ClaimUnit {
        StoredResponse runEffect();

        /** Nothing of this attempt is kept: neither the claim nor the effect's writes. */
        void abandon();
    }

    private static Attempt claimAndRun(JpaUnitOfWork unit, ScopedKey key, Fingerprint fingerprint, KeyPolicy policy,
            long deadline, Effect<? super JpaUnitOfWork, StoredResponse> effect) throws SQLException {
        return claimAndRun(unit.rawConnection(), key, fingerprint, policy, deadline, new ClaimUnit() {
            @Override
            public StoredResponse runEffect() {
                return Transactions.effect(effect, unit);
            }

            @Override
            public void abandon() {
                unit.setRollbackOnly();
            }
        });
    }

    /**
     * The claim held in the current transaction of {@code c}, then the effect and the stored response in it. The claim
     * waits at most until {@code deadline} for a row lock ({@code lock_timeout}, transaction-local); after the claim
     * the setting read before it is put back, in a caller's transaction as in idemkit's own, so the effect's lock
     * waits are not cut to the claim's.
     */
    static Attempt claimAndRun(Connection c, ScopedKey key, Fingerprint fingerprint, KeyPolicy policy, long deadline,
            ClaimUnit unit) throws SQLException {
        // what is left of the wait once a connection is in hand (waiting for one counts against it)
        long leftMillis = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
        String previous = swapLockTimeout(c, leftMillis + "ms");
        Optional<Begin> claim;
        try {
            claim = PostgresIdempotencyRecords.claimOrRead(c, key, fingerprint, UUID.randomUUID().toString(),
                    policy.ttl());
        } catch (SQLException e) {
            if (LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
                unit.abandon();
                return new Attempt.Busy();
            }
            throw e;
        }
        // the bound is the claim's: the effect that follows waits for its locks as the transaction would without it
        // (before, it kept what was left of the bound, 1 ms after a long pool wait, and a free key answered 503)
        setLockTimeout(c, previous);
        if (claim.isEmpty()) {
            return new Attempt.Again();
        }
        if (claim.get() instanceof Begin.Held held) {
            return new Attempt.Held(held.live());
        }
        KeyRecord.InProgress mine = ((Begin.Claimed) claim.get()).claim();
        StoredResponse response = unit.runEffect();
        if (response.isServerError()) {
            unit.abandon();
        } else if (!PostgresIdempotencyRecords.complete(c, key, mine, response, policy.ttl())) {
            throw new StoreUnavailableException("the Idempotency-Key claim held in this transaction could not be"
                    + " completed; nothing was kept", null);
        }
        return new Attempt.Ran(response);
    }

    private static void setLockTimeout(Connection c, String value) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(SET_LOCK_TIMEOUT)) {
            ps.setString(1, value);
            ps.execute();
        }
    }

    /**
     * Sets {@code lock_timeout} for the rest of the transaction and returns what it was, in one round trip: the
     * materialized CTE reads the setting when it is scanned, before the outer row's set_config runs.
     */
    private static String swapLockTimeout(Connection c, String value) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(SWAP_LOCK_TIMEOUT)) {
            ps.setString(1, value);
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    @Override
    public StoredResponse runWithoutKey(Effect<? super JpaUnitOfWork, StoredResponse> effect) {
        return Transactions.run(db, "request without a key", unit -> {
            StoredResponse response = Transactions.effect(effect, unit); // rollback-only: it failed, not a 2xx
            if (response.isServerError()) {
                unit.setRollbackOnly();
            }
            return response;
        });
    }

    @Override
    public Optional<KeyRecord> find(ScopedKey key) {
        return Sql.inTransaction(db.dataSource(), "idempotency read", c -> IdempotencyRows.find(c, key));
    }
}
