package dev.idemkit.adapters.postgres;

import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.EffectFailedException;
import dev.idemkit.ports.out.StoreUnavailableException;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.EntityTransaction;
import jakarta.persistence.PersistenceException;
import java.sql.SQLException;

/**
 * The transaction template every store uses: one entity manager, one transaction, commit at the end.
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

    static <R> R run(EntityManagerFactory emf, String what, Body<R> body) {
        EntityManager em;
        EntityTransaction tx;
        try {
            em = emf.createEntityManager();
            tx = em.getTransaction();
            tx.begin();
        } catch (PersistenceException e) {
            throw Sql.unavailable(what, e);
        }
        try {
            JpaUnitOfWork unit = new JpaUnitOfWork(em);
            R result = body.run(unit);
            if (tx.getRollbackOnly()) {
                tx.rollback();
                return result;
            }
            em.flush();
            if (Sql.aborted(unit.rawConnection())) {
                throw Sql.abortedTransaction(what);
            }
            try {
                tx.commit();
            } catch (PersistenceException e) {
                throw Sql.unavailable(what + " (commit)", e);
            }
            return result;
        } catch (EffectThrew e) {
            throw EffectFailedException.propagate(e.getCause());
        } catch (SQLException | PersistenceException e) {
            throw Sql.unavailable(what, e);
        } finally {
            try {
                if (tx.isActive()) {
                    tx.rollback();
                }
            } catch (PersistenceException ignored) {
                // the connection is gone: the server has rolled back already
            }
            em.close();
        }
    }

    /**
     * Runs a store's effect and flushes its entity changes, so that its own failures are reported as
     * its own. An effect that marked the unit of work rollback-only failed: nothing, key included, is
     * kept, and the caller hears so instead of a false "processed".
     */
    static <R> R effect(Effect<? super JpaUnitOfWork, R> effect, JpaUnitOfWork unit) {
        R r = work(effect, unit);
        if (unit.entityManager().getTransaction().getRollbackOnly()) {
            throw new EffectThrew(new IllegalStateException(
                    "the effect marked its unit of work rollback-only: nothing was kept, key included"));
        }
        return r;
    }

    /** Runs caller work (which may mark the unit of work rollback-only) and flushes its entity changes. */
    static <R> R work(Effect<? super JpaUnitOfWork, R> effect, JpaUnitOfWork unit) {
        try {
            R r = effect.run(unit);
            if (!unit.entityManager().getTransaction().getRollbackOnly()) {
                unit.entityManager().flush();
            }
            return r;
        } catch (StoreUnavailableException e) {
            throw e;
        } catch (Throwable t) {
            throw new EffectThrew(t);
        }
    }
}
