package dev.idemkit.app.http;

import dev.idemkit.ports.out.RedriveAudit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.idemkit.app.json.CanonicalJson;
import dev.idemkit.ports.out.StoreUnavailableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/** {@link RedriveAudit} in the app's PostgreSQL schema (table {@code redrive_audit}); it survives restarts. */
public final class PostgresRedriveAudit implements RedriveAudit {
    private final DataSource db;

    public PostgresRedriveAudit(DataSource db) {
        this.db = db;
    }

    /** Every statement here is its own transaction (the pool's connections do not autocommit). */
    private Connection connection() throws SQLException {
        Connection c = db.getConnection();
        c.setAutoCommit(true);
        return c;
    }

    @Override
    public long begin(Instant at, String operator, String approver, String reason, String queue, boolean dryRun,
            int ids) {
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement("INSERT INTO redrive_audit"
                + " (at, operator, approver, reason, queue, dry_run, ids) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id")) {
            ps.setTimestamp(1, Timestamp.from(at));
            ps.setString(2, operator);
            ps.setString(3, approver);
            ps.setString(4, reason);
            ps.setString(5, queue);
            ps.setBoolean(6, dryRun);
            ps.setInt(7, ids);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new StoreUnavailableException("recording a redrive in the audit failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void result(long entry, Result result) {
        ArrayNode one = CanonicalJson.MAPPER.createArrayNode();
        one.addObject().put("id", result.deadLetterId()).put("found", result.found()).put("action", result.action());
        update("UPDATE redrive_audit SET results = results || ?::jsonb WHERE id = ?", one.toString(), entry);
    }

    @Override
    public void finish(long entry, String error) {
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement(
                "UPDATE redrive_audit SET state = ?, error = ? WHERE id = ?")) {
            ps.setString(1, error == null ? "done" : "failed");
            ps.setString(2, error);
            ps.setLong(3, entry);
            ps.executeUpdate();
        } catch (SQLException e) {
            throw new StoreUnavailableException("recording the end of a redrive failed: " + e.getMessage(), e);
        }
    }

    private void update(String sql, String json, long entry) {
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, json);
            ps.setLong(2, entry);
            ps.executeUpdate();
        } catch (SQLException e) {
            throw new StoreUnavailableException("recording a redrive's result failed: " + e.getMessage(), e);
        }
    }

    @Override
    public List<Entry> entries(int max) {
        List<Entry> out = new ArrayList<>();
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement("SELECT id, at, operator,"
                + " approver, reason, queue, dry_run, ids, results, state, error FROM redrive_audit ORDER BY id DESC"
                + " LIMIT ?")) {
            ps.setInt(1, max);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    List<Result> results = new ArrayList<>();
                    for (JsonNode r : CanonicalJson.MAPPER.readTree(rs.getString("results"))) {
                        results.add(new Result(r.path("id").asText(), r.path("found").asBoolean(),
                                r.path("action").asText()));
                    }
                    out.add(new Entry(rs.getLong("id"), rs.getTimestamp("at").toInstant(), rs.getString("operator"),
                            rs.getString("approver"), rs.getString("reason"), rs.getString("queue"),
                            rs.getBoolean("dry_run"), rs.getInt("ids"), results, rs.getString("state"),
                            rs.getString("error")));
                }
            }
        } catch (SQLException | com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new StoreUnavailableException("reading the redrive audit failed: " + e.getMessage(), e);
        }
        return out;
    }
}
