package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.CallerTransaction;
import jakarta.persistence.EntityManager;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.transaction.support.ResourceHolderSupport;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionSynchronizationUtils;

/**
 * Spring's current transaction as idemkit's {@link CallerTransaction}: the JDBC connection that the transaction
 * manager bound to this thread for {@code dataSource} (a {@code DataSourceTransactionManager}'s, or a
 * {@code JpaTransactionManager}'s, which exposes its JDBC connection for the same data source). Never a connection
 * of its own: without an actual transaction on this thread, or with one on another data source, it refuses with an
 * {@link IllegalStateException} instead of writing the key in auto-commit.
 */
public final class SpringCallerTransaction implements CallerTransaction {
    private final DataSource dataSource;
    private final boolean rolledBackWholeOnFailure;

    public SpringCallerTransaction(DataSource dataSource) {
        this(dataSource, false);
    }

    private SpringCallerTransaction(DataSource dataSource, boolean rolledBackWholeOnFailure) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.rolledBackWholeOnFailure = rolledBackWholeOnFailure;
    }

    /**
     * The transactions the idempotent listeners open per delivery (or batch) for the store's call alone, rolled back
     * whole when it throws ({@link ListenerInbox}): the joined stores need no savepoint in them.
     */
    static SpringCallerTransaction perDelivery(DataSource dataSource) {
        return new SpringCallerTransaction(dataSource, true);
    }

    @Override
    public boolean rolledBackWholeOnFailure() {
        return rolledBackWholeOnFailure;
    }

    @Override
    public Connection connection() {
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new IllegalStateException("no Spring transaction is active on this thread: call idemkit's inbox"
                    + " inside a @Transactional method or a TransactionTemplate, so that the key commits with your"
                    + " work (idemkit never writes it in auto-commit)");
        }
        Object resource = TransactionSynchronizationManager.getResource(dataSource);
        // a DataSourceTransactionManager's holder is synchronized with the transaction; a JpaTransactionManager binds
        // its exposed JDBC connection without that flag: a bound holder during an actual transaction is the one
        if (!(resource instanceof ConnectionHolder holder)) {
            throw new IllegalStateException("the active Spring transaction holds no JDBC connection of the data source"
                    + " idemkit was given: use a DataSourceTransactionManager or a JpaTransactionManager on that same"
                    + " data source");
        }
        return holder.getConnection();
    }

    /**
     * Flushes what the transaction's resources hold back, as before a commit: a JPA persistence context (through the
     * transaction's synchronizations, or the bound entity manager's own flush).
     */
    @Override
    public void flush() {
        if (TransactionSynchronizationManager.isSynchronizationActive()) {
            TransactionSynchronizationUtils.triggerFlush();
        }
        if (jpaBound()) {
            Jpa.flush();
        }
    }

    /** Whether a participating method already marked the transaction rollback-only. */
    @Override
    public boolean rollbackOnly() {
        for (Object holder : TransactionSynchronizationManager.getResourceMap().values()) {
            if (holder instanceof ResourceHolderSupport support && support.isRollbackOnly()) {
                return true;
            }
        }
        // a JpaTransactionManager keeps the flag on the JPA transaction itself
        return jpaBound() && Jpa.rollbackOnly();
    }

    /**
     * After a failed effect under a JPA transaction the persistence context may hold the effect's changes, which a
     * savepoint does not take back: the whole transaction is marked rollback-only. Plain JDBC needs nothing more.
     */
    @Override
    public void afterFailedEffect() {
        if (jpaBound()) {
            Jpa.setRollbackOnly(); // where a JpaTransactionManager reads it at the commit
            for (Object holder : TransactionSynchronizationManager.getResourceMap().values()) {
                if (holder instanceof ResourceHolderSupport support) {
                    support.setRollbackOnly();
                }
            }
        }
    }

    /**
     * Whether a JpaTransactionManager bound an entity manager to this thread's transaction (spring-orm's
     * {@code EntityManagerHolder}, named by class so that the starter needs neither spring-orm nor JPA).
     */
    private static boolean jpaBound() {
        for (Object holder : TransactionSynchronizationManager.getResourceMap().values()) {
            if (holder.getClass().getName().equals(Jpa.HOLDER)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Everything that names JPA's types, loaded only once an entity manager is bound: a service with JDBC only has no
     * JPA on its class path, and this class is never loaded there.
     */
    private static final class Jpa {
        static final String HOLDER = "org.springframework.orm.jpa.EntityManagerHolder";

        static void flush() {
            for (EntityManager em : bound()) {
                em.flush();
            }
        }

        static boolean rollbackOnly() {
            for (EntityManager em : bound()) {
                if (em.getTransaction().getRollbackOnly()) {
                    return true;
                }
            }
            return false;
        }

        static void setRollbackOnly() {
            for (EntityManager em : bound()) {
                em.getTransaction().setRollbackOnly();
            }
        }

        private static List<EntityManager> bound() {
            List<EntityManager> found = new ArrayList<>();
            for (Object holder : TransactionSynchronizationManager.getResourceMap().values()) {
                if (holder.getClass().getName().equals(HOLDER)) {
                    try {
                        found.add((EntityManager) holder.getClass().getMethod("getEntityManager").invoke(holder));
                    } catch (ReflectiveOperationException e) {
                        throw new IllegalStateException("could not reach the transaction's EntityManager", e);
                    }
                }
            }
            return found;
        }
    }
}
