package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.CallerTransaction;
import java.sql.Connection;
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

    public SpringCallerTransaction(DataSource dataSource) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
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
        for (Object holder : TransactionSynchronizationManager.getResourceMap().values()) {
            if (holder.getClass().getName().equals("org.springframework.orm.jpa.EntityManagerHolder")) {
                flushEntityManager(holder);
            }
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
        return false;
    }

    /**
     * After a failed effect under a JPA transaction the persistence context may hold the effect's changes, which a
     * savepoint does not take back: the whole transaction is marked rollback-only. Plain JDBC needs nothing more.
     */
    @Override
    public void afterFailedEffect() {
        boolean jpa = TransactionSynchronizationManager.getResourceMap().values().stream()
                .anyMatch(h -> h.getClass().getName().equals("org.springframework.orm.jpa.EntityManagerHolder"));
        if (jpa) {
            for (Object holder : TransactionSynchronizationManager.getResourceMap().values()) {
                if (holder instanceof ResourceHolderSupport support) {
                    support.setRollbackOnly();
                }
            }
        }
    }

    private static void flushEntityManager(Object holder) {
        try {
            Object em = holder.getClass().getMethod("getEntityManager").invoke(holder);
            em.getClass().getMethod("flush").invoke(em);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("could not flush the transaction's EntityManager", e);
        }
    }
}
