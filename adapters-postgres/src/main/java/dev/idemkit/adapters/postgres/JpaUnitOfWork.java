package dev.idemkit.adapters.postgres;

import dev.idemkit.ports.out.UnitOfWork;
import jakarta.persistence.EntityManager;
import java.sql.Connection;
import java.util.Objects;
import org.hibernate.Session;

/**
 * The open PostgreSQL transaction a store's atomic step and the business effect share. Write your
 * own JPA entities through {@link #entityManager()} or plain SQL through {@link #connection()}: both
 * commit or roll back together with the idempotency key. Valid only inside the effect that received
 * it; never commit, roll back or close it yourself (use {@link #setRollbackOnly()} to abandon the work).
 * Not thread-safe.
 */
public final class JpaUnitOfWork implements UnitOfWork {
    private final EntityManager entityManager;
    private Connection connection;

    JpaUnitOfWork(EntityManager entityManager) {
        this.entityManager = Objects.requireNonNull(entityManager, "entityManager");
    }

    /** The transaction's entity manager, for the caller's own entities and repositories. */
    public EntityManager entityManager() {
        return entityManager;
    }

    /**
     * The transaction's JDBC connection, for plain SQL in the same transaction. Pending entity changes
     * are flushed first, so SQL sees them. Do not close it or change its auto-commit mode.
     */
    public Connection connection() {
        entityManager.flush();
        return rawConnection();
    }

    /**
     * Marks the transaction for rollback: nothing of this unit of work (key included) is kept. Inside
     * a store's effect this counts as a failure: the store throws instead of reporting "processed".
     */
    public void setRollbackOnly() {
        entityManager.getTransaction().setRollbackOnly();
    }

    /** The connection without flushing: for a store's own statements, which run before any effect. */
    Connection rawConnection() {
        if (connection == null) {
            connection = entityManager.unwrap(Session.class).doReturningWork(c -> c);
        }
        return connection;
    }
}
