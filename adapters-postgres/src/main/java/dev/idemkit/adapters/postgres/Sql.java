package dev.idemkit.adapters.postgres;

import dev.idemkit.ports.out.StoreUnavailableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import javax.sql.DataSource;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/** Small JDBC helpers: short transactions on the pool, time binding, exception translation. */
final class Sql {
    /** SQLState of a statement sent into an aborted transaction. */
    private static final String IN_FAILED_TRANSACTION = "25P02";

    private Sql() {}

    /** A step on a connection. */
    @FunctionalInterface
    interface Step<R> {
        R run(Connection c) throws SQLException;
    }

    /** Runs {@code step} in its own transaction on a pooled connection; SQL failures become StoreUnavailableException. */
    static <R> R inTransaction(DataSource ds, String what, Step<R> step) {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            try {
                R r = step.run(c);
                if (aborted(c)) {
                    throw abortedTransaction(what);
                }
                c.commit();
                return r;
            } catch (SQLException | RuntimeException e) {
                rollbackQuietly(c);
                throw e;
            }
        } catch (SQLException e) {
            throw unavailable(what, e);
        }
    }

    /**
     * The settings a retention batch's transaction runs under, before its one statement, in one round trip:
     * <ul>
     *   <li>no sequential scans. A purge planned without statistics (a new table, or a generic plan whose cutoff it
     *       cannot see) read the whole table twice per batch; with this the batch finds its rows through the age
     *       index and deletes them by their row address (HotPathPlansIT).</li>
     *   <li>a lock wait of at most 2 s. The rows a batch deletes are the ones it locked itself, skipping those held;
     *       a row it would still wait for (the same row address in another partition of a table an operator
     *       partitioned) fails the batch instead of holding its locks while it waits, and the next run tries again.</li>
     *   <li>an asynchronous commit. The batch does not wait for its WAL to reach the disk (the writers' commits flush
     *       it soon after): a crash can only bring back rows that a later run deletes again, and the purge no longer
     *       adds a flush of its own per batch to the writers' (RetentionBenchmark).</li>
     * </ul>
     */
    static final String PURGE_PLANNER = "SELECT set_config('enable_seqscan', 'off', true),"
            + " set_config('lock_timeout', '2s', true), set_config('synchronous_commit', 'off', true)";

    /** Sets {@link #PURGE_PLANNER} in {@code c}'s current transaction. */
    static void purgePlanner(Connection c) throws SQLException {
        try (Statement planner = c.createStatement()) {
            planner.execute(PURGE_PLANNER);
        }
    }

    /** A statement's parameters. */
    @FunctionalInterface
    interface Binder {
        void bind(PreparedStatement ps) throws SQLException;
    }

    /** One retention batch in its own transaction, under {@link #PURGE_PLANNER}: the rows it deleted. */
    static int purgeBatch(DataSource ds, String what, String sql, Binder binder) {
        return inTransaction(ds, what, c -> {
            purgePlanner(c);
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                binder.bind(ps);
                return ps.executeUpdate();
            }
        });
    }

    /**
     * Whether PostgreSQL has aborted the connection's current transaction (a statement in it failed): its
     * commit would be a rollback that pgjdbc reports as success. Read from the driver's own transaction state
     * (no round trip); through a wrapper that hides the driver, by asking the server.
     */
    static boolean aborted(Connection c) throws SQLException {
        if (c.isWrapperFor(BaseConnection.class)) {
            return c.unwrap(BaseConnection.class).getTransactionState() == TransactionState.FAILED;
        }
        try (Statement s = c.createStatement()) {
            s.execute("SELECT 1");
            return false;
        } catch (SQLException e) {
            if (IN_FAILED_TRANSACTION.equals(e.getSQLState())) {
                return true;
            }
            throw e;
        }
    }

    static StoreUnavailableException abortedTransaction(String what) {
        return new StoreUnavailableException("PostgreSQL aborted the transaction of " + what + ": a statement in it"
                + " failed (an effect that catches an SQLException cannot go on in the same transaction); nothing was"
                + " committed, key included", null);
    }

    /**
     * Whether {@code e} is JPA's {@code PersistenceException} (a Hibernate session's failure to reach the database),
     * told by its class name so that the JDBC path runs without JPA on the class path (a catch clause would load it).
     */
    static boolean persistenceFailure(Throwable e) {
        for (Class<?> k = e.getClass(); k != null; k = k.getSuperclass()) {
            if (k.getName().equals("jakarta.persistence.PersistenceException")) {
                return true;
            }
        }
        return false;
    }

    static StoreUnavailableException unavailable(String what, Throwable cause) {
        String state = cause instanceof SQLException s && s.getSQLState() != null ? " (SQLState " + s.getSQLState() + ")" : "";
        return new StoreUnavailableException("PostgreSQL failed during " + what + state, cause);
    }

    static void rollbackQuietly(Connection c) {
        try {
            c.rollback();
        } catch (SQLException ignored) {
            // the connection is broken; the pool discards it and the server rolls back
        }
    }

    /** PostgreSQL keeps microseconds: every instant is truncated before it is bound or compared. */
    static Instant micros(Instant t) {
        return t.truncatedTo(ChronoUnit.MICROS);
    }

    static void setInstant(PreparedStatement ps, int index, Instant t) throws SQLException {
        ps.setObject(index, OffsetDateTime.ofInstant(micros(t), ZoneOffset.UTC));
    }

    static Instant instant(java.sql.ResultSet rs, int index) throws SQLException {
        OffsetDateTime t = rs.getObject(index, OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }
}
