package dev.idemkit.adapters.postgres;

import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.EffectFailedException;
import dev.idemkit.ports.out.StoreUnavailableException;
import jakarta.persistence.PersistenceException;
import java.sql.SQLException;

/**
 * The transaction template every store uses: one pooled connection, one transaction, commit at the end (a Hibernate
 * session joins it only when the effect asks for the entity manager, {@link JpaUnitOfWork}).
 * It keeps two kinds of failure apart: the effect's own exceptions come back as they are, while the
 * store's SQL and the commit become {@link StoreUnavailableException}. Either way nothing is kept.
 *
 * <p>A transaction that PostgreSQL aborted (any statement failed, even one whose exception the effect
 * caught and swallowed) is never committed: pgjdbc's {@code commit()} would roll it back and return
 * normally, and the caller would hear "processed" for work that is gone. It is rolled back and reported
 * as a {@link StoreUnavailableException}, so a delivery is retried and a request answered with a 5xx.
 */
final class Transactions {
    private Transactions() {}

    /** A store's body: its own statements (SQLException = the store failed) and, inside, the effect. */
    @FunctionalInterface
    interface Body<R> {
        R run(JpaUnitOfWork unit) throws SQLException;
    }

    /** Carries the effect's exception past the store's translation. */
    static final class EffectThrew extends RuntimeException {
        private static final long serialVersionUID = 1L;

        EffectThrew(Throwable cause) {
            super(cause);
        }
    }

    static <R> R run(PostgresDatabase db, String what, Body<R> body) {
        return run(db, what, java.util.OptionalLong.empty(), body);
    }

    /**
     * As {@link #run(PostgresDatabase, String, Body)}, waiting for a pooled connection at most until
     * {@code deadlineNanos} ({@link System#nanoTime()}; empty: as long as the pool waits). A connection not had by
     * then is a StoreUnavailableException that says so, within the bound instead of after the pool's own timeout.
     */
    static <R> R run(PostgresDatabase db, String what, java.util.OptionalLong deadlineNanos, Body<R> body) {
        JpaUnitOfWork unit;
        try {
            java.sql.Connection c;
            if (deadlineNanos.isEmpty()) {
                c = db.dataSource().getConnection();
            } else {
                long waitMillis = (deadlineNanos.getAsLong() - System.nanoTime()) / 1_000_000;
                try {
                    c = db.connection(waitMillis);
                } catch (java.sql.SQLTransientConnectionException timedOut) {
                    throw new dev.idemkit.ports.out.StoreBusyException(what + ": no database connection was free within the wait"
                            + " bound (" + Math.max(0, waitMillis) + " ms): " + timedOut.getMessage(), timedOut);
                }
            }
            try {
                if (c.getAutoCommit()) { // a data source of the caller's that did not turn it off: never autocommit
                    c.setAutoCommit(false);
                }
            } catch (SQLException e) {
                c.close();
                throw e;
            }
            unit = new JpaUnitOfWork(db::sessionFactory, c);
        } catch (SQLException | PersistenceException e) {
            throw Sql.unavailable(what, e);
        }
        boolean committed = false;
        try {
            R result = body.run(unit);
            if (unit.rollbackOnly()) {
                return result;
            }
            unit.flush();
            if (Sql.aborted(unit.rawConnection())) {
                throw Sql.abortedTransaction(what);
            }
            try {
                unit.commit();
            } catch (SQLException | PersistenceException e) {
                throw Sql.unavailable(what + " (commit)", e);
            }
            committed = true;
            return result;
        } catch (EffectThrew e) {
            throw EffectFailedException.propagate(e.getCause());
        } catch (SQLException | PersistenceException e) {
            throw Sql.unavailable(what, e);
        } finally {
            if (!committed) {
                unit.rollbackQuietly();
            }
            unit.close();
        }
    }

    /**
     * Runs a store's effect and flushes its entity changes, so that its own failures are reported as
     * its own. An effect that marked the unit of work rollback-only failed: nothing, key included, is
     * kept, and the caller hears so instead of a false "processed".
     */
    static <R> R effect(Effect<? super JpaUnitOfWork, R> effect, JpaUnitOfWork unit) {
        R r = work(effect, unit);
        if (unit.rollbackOnly()) {
            throw new EffectThrew(new IllegalStateException(
                    "the effect marked its unit of work rollback-only: nothing was kept, key included"));
        }
        return r;
    }

    /** Runs caller work (which may mark the unit of work rollback-only) and flushes its entity changes. */
    static <R> R work(Effect<? super JpaUnitOfWork, R> effect, JpaUnitOfWork unit) {
        try {
            R r = effect.run(unit);
            if (!unit.rollbackOnly()) {
                unit.flush();
            }
            return r;
        } catch (StoreUnavailableException e) {
            throw e;
        } catch (Throwable t) {
            throw new EffectThrew(t);
        }
    }
}
