package dev.idemkit.adapters.postgres;

import dev.idemkit.ports.out.StoreUnavailableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import javax.sql.DataSource;

/** Small JDBC helpers: short transactions on the pool, time binding, exception translation. */
final class Sql {
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
