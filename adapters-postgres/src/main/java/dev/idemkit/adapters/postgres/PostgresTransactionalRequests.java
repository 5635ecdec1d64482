package dev.idemkit.adapters.postgres;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.InvalidKeyException;
import dev.idemkit.domain.httpkey.IdempotencyKey;
import dev.idemkit.domain.httpkey.KeyDecision;
import dev.idemkit.domain.httpkey.KeyMachine;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.in.IdempotentRequests.Reply;
import dev.idemkit.ports.in.IdempotentRequests.Request;
import dev.idemkit.ports.out.IdempotencyRecords.Begin;
import dev.idemkit.ports.service.Problems;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Idempotency-Key flow with the first request's effect in the SAME transaction as its claim, so
 * that key, effect and stored response commit (or roll back) together.
 *
 * <p>Atomic step: the claim {@code INSERT ... ON CONFLICT (client_id, idem_key) DO UPDATE ... WHERE
 * expires_at <= now}, held uncommitted while the effect runs. A concurrent same-key request's claim
 * blocks on that row; when the first commits it reads the completed record and replays it, when the
 * first rolls back (5xx or exception) it claims and runs itself. The wait is bounded by {@code
 * lock_timeout} = the policy's wait bound, after which it answers 409. A record left in progress by
 * the polling {@code IdempotentRequestService} on the same table is waited for by polling. Each
 * waiting request holds a pooled connection: size the pool above the expected same-key concurrency.
 * Thread-safe.
 */
public final class PostgresTransactionalRequests {
    private static final Logger LOG = LoggerFactory.getLogger(PostgresTransactionalRequests.class);
    private static final String LOCK_NOT_AVAILABLE = "55P03";
    static final String SET_LOCK_TIMEOUT = "SELECT set_config('lock_timeout', ?, true)";

    /** The request's effect, run in the claim's transaction; a 5xx response or an exception rolls everything back. */
    @FunctionalInterface
    public interface Execution {
        StoredResponse execute(JpaUnitOfWork work) throws Exception;
    }

    private enum Again { POLL, CLAIM }

    private final PostgresDatabase db;
    private final KeyPolicy policy;
    /** Every time is the database's own (see {@link PostgresIdempotencyRecords}): no caller's clock is read. */
    public PostgresTransactionalRequests(PostgresDatabase db, KeyPolicy policy) {
        this.db = Objects.requireNonNull(db, "db");
        this.policy = Objects.requireNonNull(policy, "policy");
    }

    /** @return the executed or replayed response, or a 400 / 409 / 422 problem, as {@code IdempotentRequests.handle} */
    public Reply handle(Request request, Execution execution) {
        Optional<IdempotencyKey> key;
        try {
            key = KeyMachine.parse(request.idempotencyKeyHeader(), policy.requirement());
        } catch (InvalidKeyException e) {
            return new Reply(Problems.badRequest(e.getMessage()), false);
        }
        if (key.isEmpty()) {
            return new Reply(db.inTransaction(work -> rollbackOn5xx(work, execution.execute(work))), false);
        }
        ScopedKey scoped = new ScopedKey(request.client(), key.get());
        Fingerprint fp = Fingerprint.ofRequest(request.method(), request.path(), request.canonicalBody());
        long deadline = System.nanoTime() + policy.waitBound().toNanos();
        long pause = 2;
        while (true) {
            Optional<Reply> answered = answeredWithoutLock(scoped, fp);
            if (answered.isPresent()) {
                return answered.get();
            }
            Object result = Transactions.run(db.entityManagerFactory(), "idempotent request",
                    unit -> attempt(unit, scoped, fp, deadline, execution));
            if (result instanceof Reply reply) {
                LOG.debug("idempotency client={} key={} status={} replayed={}", scoped.client(), scoped.key(),
                        reply.response().status(), reply.replayed());
                return reply;
            }
            if (System.nanoTime() >= deadline) {
                return new Reply(Problems.conflict(), false);
            }
            if (result == Again.POLL) {
                sleep(pause);
                pause = Math.min(50, pause * 2);
            }
        }
    }

    /**
     * A completed record answers with one plain read, without Hibernate and without the claim's row lock
     * (its {@code ON CONFLICT DO UPDATE} locks the row even when its {@code WHERE} fails): replays of one
     * key then run in parallel instead of queueing on the row.
     */
    private Optional<Reply> answeredWithoutLock(ScopedKey key, Fingerprint fp) {
        Optional<KeyRecord> committed = Sql.inTransaction(db.dataSource(), "idempotency read",
                c -> IdempotencyRows.find(c, key));
        if (committed.isEmpty() || !(committed.get() instanceof KeyRecord.Completed)) {
            return Optional.empty();
        }
        KeyDecision decision = KeyMachine.decideLive(committed, fp);
        if (decision instanceof KeyDecision.Replay replay) {
            return Optional.of(new Reply(replay.response(), true));
        }
        if (decision instanceof KeyDecision.FingerprintMismatch) {
            return Optional.of(new Reply(Problems.mismatch(), false));
        }
        return Optional.empty();
    }

    private Object attempt(JpaUnitOfWork unit, ScopedKey key, Fingerprint fp, long deadline, Execution execution)
            throws SQLException {
        Connection c = unit.rawConnection();
        long waitMillis = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
        try (PreparedStatement ps = c.prepareStatement(SET_LOCK_TIMEOUT)) {
            ps.setString(1, waitMillis + "ms");
            ps.execute();
        }
        // the claim stays uncommitted (and so invisible, its row locked) until the effect and the response commit
        // with it: no lease can lapse under a running request, so the claim lives as long as the response would
        Optional<Begin> claim;
        try {
            claim = PostgresIdempotencyRecords.claimOrRead(c, key, fp, UUID.randomUUID().toString(), policy.ttl());
        } catch (SQLException e) {
            if (LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
                unit.setRollbackOnly();
                return new Reply(Problems.conflict(), false);
            }
            throw e;
        }
        if (claim.isEmpty()) {
            return Again.CLAIM;
        }
        if (claim.get() instanceof Begin.Claimed mine) {
            StoredResponse response = Transactions.effect(execution::execute, unit);
            if (response.isServerError()) {
                unit.setRollbackOnly();
            } else if (!PostgresIdempotencyRecords.complete(c, key, mine.claim(), response, policy.ttl())) {
                throw new IllegalStateException("a claim held in this transaction could not be completed");
            }
            return new Reply(response, false);
        }
        KeyDecision decision = KeyMachine.decideLive(Optional.of(((Begin.Held) claim.get()).live()), fp);
        if (decision instanceof KeyDecision.Replay replay) {
            return new Reply(replay.response(), true);
        }
        if (decision instanceof KeyDecision.FingerprintMismatch) {
            return new Reply(Problems.mismatch(), false);
        }
        return decision instanceof KeyDecision.WaitForFirst ? Again.POLL : Again.CLAIM;
    }

    private static StoredResponse rollbackOn5xx(JpaUnitOfWork work, StoredResponse response) {
        if (response.isServerError()) {
            work.setRollbackOnly();
        }
        return response;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the first request with this key", e);
        }
    }
}
