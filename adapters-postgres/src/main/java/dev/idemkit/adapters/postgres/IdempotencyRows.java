package dev.idemkit.adapters.postgres;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** Maps {@code idempotency_records} rows to and from {@link KeyRecord}; headers travel as two text arrays. */
final class IdempotencyRows {
    static final String IN_PROGRESS = "in_progress";
    static final String COMPLETED = "completed";
    /** The fence reported for an in-progress row written before fences existed: no caller holds it. */
    static final String LEGACY_FENCE = "(none: written before fences)";

    /** The live record: expiry is decided on the database's clock, never on a caller's. */
    static final String SELECT = """
            SELECT fingerprint, state, status, body, created_at, expires_at,
                   ARRAY(SELECT h.key FROM jsonb_each_text(headers) h ORDER BY h.key) AS header_names,
                   ARRAY(SELECT h.value FROM jsonb_each_text(headers) h ORDER BY h.key) AS header_values,
                   fence
            FROM idempotency_records
            WHERE client_id = ? AND idem_key = ? AND expires_at > clock_timestamp()
            """;

    private IdempotencyRows() {}

    /** The live record under {@code key} (not expired on the database's clock). */
    static Optional<KeyRecord> find(Connection c, ScopedKey key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(SELECT)) {
            bindKey(ps, 1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(read(rs)) : Optional.empty();
            }
        }
    }

    static void bindKey(PreparedStatement ps, int first, ScopedKey key) throws SQLException {
        ps.setString(first, key.client().value());
        ps.setString(first + 1, key.key().value());
    }

    /** Binds the header names and values as two text arrays at {@code first} and {@code first + 1}. */
    static void bindHeaders(Connection c, PreparedStatement ps, int first, Map<String, String> headers)
            throws SQLException {
        TreeMap<String, String> sorted = new TreeMap<>(headers);
        ps.setArray(first, c.createArrayOf("text", sorted.keySet().toArray()));
        ps.setArray(first + 1, c.createArrayOf("text", sorted.values().toArray()));
    }

    private static KeyRecord read(ResultSet rs) throws SQLException {
        Fingerprint fp = new Fingerprint(rs.getString("fingerprint"));
        var created = Sql.instant(rs, 5);
        var expires = Sql.instant(rs, 6);
        if (IN_PROGRESS.equals(rs.getString("state"))) {
            String fence = rs.getString("fence");
            return new KeyRecord.InProgress(fp, created, expires, fence == null ? LEGACY_FENCE : fence);
        }
        String[] names = strings(rs.getArray("header_names"));
        String[] values = strings(rs.getArray("header_values"));
        Map<String, String> headers = new TreeMap<>();
        for (int i = 0; i < names.length; i++) {
            headers.put(names[i], values[i]);
        }
        return new KeyRecord.Completed(fp, new StoredResponse(rs.getInt("status"), headers, rs.getBytes("body")),
                created, expires);
    }

    private static String[] strings(Array a) throws SQLException {
        return a == null ? new String[0] : (String[]) a.getArray();
    }
}
