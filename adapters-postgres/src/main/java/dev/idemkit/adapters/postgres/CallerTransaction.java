package dev.idemkit.adapters.postgres;

import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import org.hibernate.Session;

/**
 * A transaction that the CALLER owns, in which a joined store ({@link JoinedInboxStore}, {@link JoinedVersionedStore},
 * {@link JoinedUpsertStore}) runs its statement: the store never commits, rolls back or closes it, so the key's fate
 * is the caller's commit. Looked up at each call, so one store serves every transaction of a thread-bound
 * transaction manager (Spring's); for a plain JDBC or JPA transaction make one per transaction, it costs nothing.
 *
 * <p>There is no auto-commit fallback: a store used where no transaction is open gets an {@link IllegalStateException}
 * saying so, because a key committed on its own, before the effect, would turn a crash into a lost effect.
 */
@FunctionalInterface
public interface CallerTransaction {

    /**
     * The JDBC connection of the caller's transaction that is open now, with auto-commit off.
     *
     * @throws IllegalStateException when no transaction is open
     */
    Connection connection();

    /**
     * Pushes the caller's pending changes (a JPA persistence context) to the database, so that their failures show up
     * inside the store's call instead of at the caller's commit. Nothing to do for plain JDBC.
     */
    default void flush() {}

    /**
     * Whether the caller's transaction is already doomed (marked rollback-only, e.g. by a participating method that
     * failed): an effect that leaves it so has failed, whatever it returned.
     */
    default boolean rollbackOnly() {
        return false;
    }

    /**
     * Whether the caller's transaction can no longer commit what it did: rollback-only, or aborted by a failed
     * statement (PostgreSQL would turn its commit into a rollback that the driver reports as success).
     */
    default boolean doomed() {
        if (rollbackOnly()) {
            return true;
        }
        try {
            return Sql.aborted(connection());
        } catch (SQLException e) {
            throw Sql.unavailable("reading the caller's transaction state", e);
        }
    }

    /**
     * Called after an effect failed and the store rolled back to its savepoint. A JDBC transaction needs nothing more;
     * a JPA persistence context cannot be rolled back to a savepoint (the entities the effect changed stay dirty and
     * would be flushed at the caller's commit, without the key), so a JPA transaction is marked rollback-only.
     */
    default void afterFailedEffect() {}

    /**
     * Whether this transaction was begun for the one store call and is rolled back WHOLE when that call throws (a
     * transaction of the caller's own per delivery, as the Spring starter's idempotent listeners open). Rolling back
     * to a savepoint would then change nothing the whole rollback does not, so the joined stores set none: two round
     * trips less per call. False (the default) for a transaction that may hold the caller's earlier work or go on
     * after the call: there the savepoint keeps a failed effect from taking that work with it.
     */
    default boolean rolledBackWholeOnFailure() {
        return false;
    }

    /** The transaction open on {@code connection}: auto-commit must be off when the store is called. */
    static CallerTransaction jdbc(Connection connection) {
        Objects.requireNonNull(connection, "connection");
        return () -> {
            try {
                if (connection.isClosed()) {
                    throw new IllegalStateException("the caller's JDBC connection is closed");
                }
                if (connection.getAutoCommit()) {
                    throw new IllegalStateException("the caller's JDBC connection is in auto-commit mode: a joined"
                            + " idemkit store runs only inside a transaction the caller owns (setAutoCommit(false),"
                            + " then commit after the call); use the self-managed stores to let idemkit commit");
                }
                return connection;
            } catch (SQLException e) {
                throw Sql.unavailable("reading the caller's connection state", e);
            }
        };
    }

    /**
     * The transaction of a Hibernate {@code EntityManager} (resource-local or JTA): it must be joined to an active
     * transaction when the store is called. The store's statements run on the session's JDBC connection; the caller's
     * pending entity changes are flushed after the effect.
     */
    static CallerTransaction jpa(EntityManager entityManager) {
        Objects.requireNonNull(entityManager, "entityManager");
        return new CallerTransaction() {
            @Override
            public Connection connection() {
                if (!entityManager.isOpen() || !entityManager.isJoinedToTransaction()) {
                    throw new IllegalStateException("the caller's EntityManager has no active transaction: a joined"
                            + " idemkit store runs only inside a transaction the caller owns (begin it first)");
                }
                try {
                    return entityManager.unwrap(Session.class).doReturningWork(c -> c);
                } catch (PersistenceException e) {
                    throw Sql.unavailable("reaching the EntityManager's connection", e);
                }
            }

            @Override
            public void flush() {
                entityManager.flush();
            }

            @Override
            public boolean rollbackOnly() {
                try {
                    return entityManager.getTransaction().getRollbackOnly();
                } catch (IllegalStateException jta) {
                    return false; // a JTA entity manager: the transaction's status is the JTA manager's
                }
            }

            @Override
            public void afterFailedEffect() {
                try {
                    entityManager.getTransaction().setRollbackOnly();
                } catch (IllegalStateException jta) {
                    throw new IllegalStateException("the effect failed inside a JTA transaction, which idemkit cannot"
                            + " mark rollback-only through the EntityManager: roll it back", jta);
                }
            }
        };
    }
}
