package dev.idemkit.adapters.postgres;

import dev.idemkit.ports.out.UnitOfWork;
import java.sql.Connection;
import java.util.Objects;

/**
 * What a joined store hands its effect: the caller's own transaction. Most effects ignore it and use the caller's
 * repositories directly (they are in the same transaction); {@link #connection()} is there for plain SQL. Never
 * commit, roll back or close it inside the effect; throw to abandon the effect (the store then rolls back to before
 * the key, and the exception reaches the caller).
 */
public final class JoinedUnitOfWork implements UnitOfWork {
    private final Connection connection;
    private boolean abandoned;
    private boolean effectStarted;

    JoinedUnitOfWork(Connection connection) {
        this.connection = Objects.requireNonNull(connection, "connection");
    }

    /** A store's verdict: nothing of this call is to be kept (rolled back to its savepoint), without failing. */
    void abandon() {
        abandoned = true;
    }

    boolean abandoned() {
        return abandoned;
    }

    void effectStarted() {
        effectStarted = true;
    }

    /** Whether the caller's effect ran (or began) in this call: only then can a persistence context hold its work. */
    boolean effectRan() {
        return effectStarted;
    }

    /** The JDBC connection of the caller's transaction. */
    public Connection connection() {
        return connection;
    }
}
