package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.CallerTransaction;
import java.sql.Connection;
import java.util.Objects;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.ConnectionHolder;
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
        if (!(resource instanceof ConnectionHolder holder) || !holder.isSynchronizedWithTransaction()) {
            throw new IllegalStateException("the active Spring transaction holds no JDBC connection of the data source"
                    + " idemkit was given: use a DataSourceTransactionManager or a JpaTransactionManager on that same"
                    + " data source");
        }
        return holder.getConnection();
    }

    /** Flushes what the transaction's resources hold back (a JPA persistence context), as before a commit. */
    @Override
    public void flush() {
        if (TransactionSynchronizationManager.isSynchronizationActive()) {
            TransactionSynchronizationUtils.triggerFlush();
        }
    }
}
