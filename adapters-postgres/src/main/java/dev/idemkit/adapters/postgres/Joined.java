package dev.idemkit.adapters.postgres;

import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.EffectFailedException;
import dev.idemkit.ports.out.StoreUnavailableException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;

/**
 * The template of every joined store, the caller-owned twin of {@link Transactions}: a SAVEPOINT in the caller's
 * transaction, the store's statement and the effect, then RELEASE. Never a commit or a rollback of the caller's
 * transaction: when the effect throws, when the store's SQL fails or when a statement aborted the transaction, it
 * rolls back TO the savepoint (the key and the effect's writes are gone, the caller's earlier work stays and its
 * transaction is usable again) and the caller hears the failure, so a caller that catches it and commits keeps
 * neither key nor effect. A duplicate is a statement that inserted nothing: nothing to undo, the transaction goes on.
 */
final class Joined {
    private Joined() {}

    /** A joined store's body on the caller's connection. */
    @FunctionalInterface
    interface Body<R> {
        R run(Connection c, JoinedUnitOfWork unit) throws SQLException;
    }

    static <R> R run(CallerTransaction tx, String what, Body<R> body) {
        Connection c = tx.connection();
        tx.flush(); // the caller's pending work goes to the database BEFORE the savepoint, never inside it
        Savepoint savepoint;
        try {
            if (Sql.aborted(c)) {
                throw new IllegalStateException("the caller's transaction is already aborted (a statement in it failed)"
                        + " before " + what + ": roll it back and retry");
            }
            // none where the caller rolls the whole transaction back when this throws: it would change nothing
            savepoint = tx.rolledBackWholeOnFailure() ? null : c.setSavepoint();
        } catch (SQLException e) {
            throw Sql.unavailable(what, e);
        }
        JoinedUnitOfWork unit = new JoinedUnitOfWork(c);
        try {
            R result = body.run(c, unit);
            if (unit.abandoned()) { // the store's own verdict (a 5xx, a lock wait given up): keep nothing, no error
                if (savepoint == null) {
                    throw new IllegalStateException(what + " kept nothing on purpose, which needs a savepoint: use it"
                            + " in a transaction that is not rolled back whole on failure");
                }
                c.rollback(savepoint);
                if (unit.effectRan()) {
                    tx.afterFailedEffect();
                }
                return result;
            }
            if (Sql.aborted(c)) {
                throw new StoreUnavailableException("PostgreSQL aborted the caller's transaction during " + what
                        + ": a statement failed (an effect that catches an SQLException cannot go on in the same"
                        + " transaction); rolled back to before the key, nothing of it will commit", null);
            }
            if (savepoint != null) {
                c.releaseSavepoint(savepoint);
            }
            return result;
        } catch (Transactions.EffectThrew e) {
            rollbackTo(c, savepoint, tx, unit);
            throw EffectFailedException.propagate(e.getCause());
        } catch (SQLException e) {
            rollbackTo(c, savepoint, tx, unit);
            throw Sql.unavailable(what, e);
        } catch (RuntimeException | Error e) {
            rollbackTo(c, savepoint, tx, unit);
            if (Sql.persistenceFailure(e)) { // by name: a JDBC-only service has no JPA on its class path
                throw Sql.unavailable(what, e);
            }
            throw e;
        }
    }

    /**
     * Runs the effect in the caller's transaction and flushes the caller's pending changes (JPA). An effect that returns
     * normally but left the transaction aborted (it caught and swallowed a failed statement) or rollback-only (a
     * participating method failed) has failed: it is reported as the effect's failure, never as processed, and never
     * as the store's (a retry would meet the same effect).
     */
    static <R> R effect(CallerTransaction tx, Effect<? super JoinedUnitOfWork, R> effect, JoinedUnitOfWork unit) {
        R r;
        unit.effectStarted();
        try {
            r = effect.run(unit);
            tx.flush();
        } catch (StoreUnavailableException e) {
            throw e;
        } catch (Throwable t) {
            throw new Transactions.EffectThrew(t);
        }
        boolean aborted;
        try {
            aborted = Sql.aborted(unit.connection());
        } catch (SQLException e) {
            throw Sql.unavailable("checking the caller's transaction after the effect", e);
        }
        if (aborted) {
            throw new Transactions.EffectThrew(new IllegalStateException("the effect left the transaction aborted: a"
                    + " statement in it failed and the effect went on (an SQLException caught and swallowed); nothing of"
                    + " it is kept, key included"));
        }
        if (tx.rollbackOnly()) {
            throw new Transactions.EffectThrew(new IllegalStateException("the effect left the caller's transaction"
                    + " rollback-only (a participating method failed); nothing of it is kept, key included"));
        }
        return r;
    }

    /** Back to the savepoint; where the effect had begun, its persistence context cannot follow: the caller is told. */
    private static void rollbackTo(Connection c, Savepoint savepoint, CallerTransaction tx, JoinedUnitOfWork unit) {
        rollbackTo(c, savepoint);
        if (unit.effectRan()) {
            tx.afterFailedEffect();
        }
    }

    private static void rollbackTo(Connection c, Savepoint savepoint) {
        if (savepoint == null) {
            return; // the caller rolls back the whole transaction: the exception is on its way there
        }
        try {
            c.rollback(savepoint);
        } catch (SQLException ignored) {
            // the connection is broken: the caller's commit fails and the server rolls everything back
        }
    }
}
