package dev.idemkit.adapters.postgres;

import dev.idemkit.ports.out.UnitOfWork;
import jakarta.persistence.EntityManager;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import java.util.function.Supplier;
import org.hibernate.Session;
import org.hibernate.SessionFactory;

/**
 * The open PostgreSQL transaction a store's atomic step and the business effect share. Write your
 * own JPA entities through {@link #entityManager()} or plain SQL through {@link #connection()}: both
 * commit or roll back together with the idempotency key. Valid only inside the effect that received
 * it; never commit, roll back or close it yourself (use {@link #setRollbackOnly()} to abandon the work).
 * Not thread-safe.
 *
 * <p>The transaction is a pooled JDBC connection's (auto-commit off). A Hibernate session is opened on that same
 * connection only when the effect first asks for {@link #entityManager()}: an effect in plain SQL (the common case of
 * a consumer) pays for no session, no flush and no persistence context, only its statements and the commit, as a
 * hand-written JDBC consumer would.
 */
public final class JpaUnitOfWork implements UnitOfWork {
    private final Supplier<SessionFactory> sessionFactory;
    private final Connection connection;
    private Session session;
    private boolean rollbackOnly;
    /** Work to send with the commit (outbox appends), in order. */
    private final java.util.List<AtCommit> atCommit = new java.util.ArrayList<>();

    /**
     * Statements that belong to this unit of work but need not run before its commit: the commit sends them. One alone
     * goes in the commit's own round trip (the statement and {@code COMMIT} sent together), several run first. A
     * statement the effect runs after them ({@link #connection()}) has them written first.
     */
    interface AtCommit {
        /** Runs the statement alone (before a commit, or with others). */
        void run(Connection c) throws SQLException;

        /** Runs the statement and commits the transaction in one round trip. */
        void runAndCommit(Connection c) throws SQLException;

        /** Runs several of them (all of one kind), before a commit. */
        default void runAll(Connection c, java.util.List<AtCommit> all) throws SQLException {
            for (AtCommit a : all) {
                a.run(c);
            }
        }
    }

    JpaUnitOfWork(Supplier<SessionFactory> sessionFactory, Connection connection) {
        this.sessionFactory = Objects.requireNonNull(sessionFactory, "sessionFactory");
        this.connection = Objects.requireNonNull(connection, "connection");
    }

    /**
     * The transaction's entity manager, for the caller's own entities and repositories. Opened on first use, on the
     * transaction's own connection: it sees every statement run before in this unit of work.
     */
    public EntityManager entityManager() {
        if (session == null) {
            Session s = sessionFactory.get().withOptions().connection(connection).openSession();
            // the connection is in a transaction already (auto-commit off): the session's begins on it, and its
            // commit is the connection's
            s.getTransaction().begin();
            if (rollbackOnly) {
                s.getTransaction().setRollbackOnly();
            }
            session = s;
        }
        return session;
    }

    /**
     * The transaction's JDBC connection, for plain SQL in the same transaction. Pending entity changes
     * are flushed first, so SQL sees them. Do not close it or change its auto-commit mode.
     */
    public Connection connection() {
        if (session != null && !rollbackOnly()) {
            session.flush();
        }
        writePending();
        return connection;
    }

    /**
     * Writes now what was waiting for the commit ({@link #atCommit}): before any statement the effect runs after an
     * append (a savepoint and its rollback, a {@code SET LOCAL}, an append that is written at once), so that the row
     * takes part in it in the order the effect made them. Only what comes after the effect's last statement goes
     * with the commit.
     */
    void writePending() {
        if (atCommit.isEmpty() || rollbackOnly) {
            return;
        }
        java.util.List<AtCommit> all = java.util.List.copyOf(atCommit);
        atCommit.clear();
        try {
            all.get(0).runAll(connection, all);
        } catch (SQLException e) {
            throw Sql.unavailable("outbox append", e);
        }
    }

    /**
     * Marks the transaction for rollback: nothing of this unit of work (key included) is kept. Inside
     * a store's effect this counts as a failure: the store throws instead of reporting "processed".
     */
    public void setRollbackOnly() {
        rollbackOnly = true;
        if (session != null) {
            session.getTransaction().setRollbackOnly();
        }
    }

    /** Marked for rollback, here or through the entity manager's own transaction. */
    boolean rollbackOnly() {
        return rollbackOnly || session != null && session.getTransaction().getRollbackOnly();
    }

    /** Whether the effect asked for the entity manager (a Hibernate session was opened). */
    boolean sessionOpened() {
        return session != null;
    }

    /** Flushes pending entity changes (nothing to do when no session was opened). */
    void flush() {
        if (session != null) {
            session.flush();
        }
    }

    /** The connection without flushing: for a store's own statements, which run before any effect. */
    Connection rawConnection() {
        return connection;
    }

    /** Sends {@code work} with the commit (dropped if the unit of work rolls back). */
    void atCommit(AtCommit work) {
        atCommit.add(Objects.requireNonNull(work, "work"));
    }

    /**
     * Commits: through the session when there is one (it flushes first), else the connection. What waits for the commit
     * ({@link #atCommit}) goes first: one statement alone in the commit's round trip, several before it.
     */
    void commit() throws SQLException {
        if (session == null && atCommit.size() == 1) {
            AtCommit only = atCommit.remove(0);
            only.runAndCommit(connection);
            connection.commit(); // the transaction is over: for the pool's book-keeping only (pgjdbc sends nothing)
            return;
        }
        if (!atCommit.isEmpty()) {
            session(); // pending entity changes first, as the order they were made in
            java.util.List<AtCommit> all = java.util.List.copyOf(atCommit);
            atCommit.clear();
            all.get(0).runAll(connection, all);
        }
        if (session != null) {
            session.getTransaction().commit();
        } else {
            connection.commit();
        }
    }

    private void session() {
        if (session != null) {
            session.flush();
        }
    }

    /** Rolls back whatever is still open; a connection that is gone was rolled back by the server already. */
    void rollbackQuietly() {
        try {
            if (session != null && session.getTransaction().isActive()) {
                session.getTransaction().rollback();
            } else {
                connection.rollback();
            }
        } catch (RuntimeException | SQLException ignored) {
            // the connection is gone: the server has rolled back already
        }
    }

    /** Closes the session (never the connection it was given) and gives the connection back to the pool. */
    void close() {
        try {
            if (session != null) {
                session.close();
            }
        } catch (RuntimeException ignored) {
            // closing a session on a broken connection: the connection is closed below either way
        } finally {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // the pool evicts a broken connection by itself
            }
        }
    }
}
