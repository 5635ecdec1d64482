package dev.idemkit.benchmarks;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * PostgreSQL's own view of a run, as differences between two snapshots: per statement from {@code pg_stat_statements}
 * (calls, execution time, rows; when the extension is loaded) and the WAL from {@code pg_stat_wal} (records, bytes,
 * writes and fsyncs with their time when {@code track_wal_io_timing} is on). {@code pg_stat_wal} is part of the
 * cumulative statistics, which a busy backend flushes at most once a second and an idle one up to 10 s later:
 * {@link #settle()} waits that out before the second snapshot.
 */
final class PgStats {
    /** One statement's counters (pg_stat_statements' normalized text, $1 for each parameter). */
    record Query(String query, long calls, double totalMs, long rows) {}

    /** pg_stat_wal's counters; the times are 0 without {@code track_wal_io_timing}. */
    record Wal(long records, long fullPages, long bytes, long writes, long syncs, double writeMs, double syncMs) {
        Wal minus(Wal o) {
            return new Wal(records - o.records, fullPages - o.fullPages, bytes - o.bytes, writes - o.writes,
                    syncs - o.syncs, writeMs - o.writeMs, syncMs - o.syncMs);
        }
    }

    /** A table's scans (pg_stat_user_tables): a sequential scan of a growing table in a hot path is a plan gone wrong. */
    record Scans(long seqScans, long seqRowsRead, long indexScans) {
        Scans minus(Scans o) {
            return new Scans(seqScans - o.seqScans, seqRowsRead - o.seqRowsRead, indexScans - o.indexScans);
        }
    }

    record Snapshot(Map<String, Query> statements, Wal wal, Map<String, Scans> tables) {}

    /** What happened between two snapshots: the statements ordered by their share of execution time. */
    record Delta(List<Query> statements, Wal wal, Map<String, Scans> tables) {
        /** "processed_messages: 300 sequential scans reading 9,000,000 rows, 1,200 index scans; ..." */
        String scans() {
            StringBuilder b = new StringBuilder();
            tables.forEach((t, s) -> b.append(b.isEmpty() ? "" : "; ").append(String.format(Locale.ROOT,
                    "%s: %,d sequential scans reading %,d rows, %,d index scans", t, s.seqScans(), s.seqRowsRead(),
                    s.indexScans())));
            return b.toString();
        }

        double totalExecMs() {
            return statements.stream().mapToDouble(Query::totalMs).sum();
        }
    }

    private final String url;
    private final String schema;
    private final boolean statements;

    /** On the database at {@code url}; table scans of the tables in {@code schema}. */
    PgStats(String url, String schema) throws SQLException {
        this.url = url;
        this.schema = schema;
        try (Connection c = connect(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_extension WHERE extname = 'pg_stat_statements'")) {
            rs.next();
            boolean installed = rs.getLong(1) > 0;
            if (!installed) {
                installed = tryCreateExtension(c);
            }
            this.statements = installed;
        }
    }

    /** Whether per-statement counters are there ({@code pg_stat_statements} preloaded and created). */
    boolean perStatement() {
        return statements;
    }

    private static boolean tryCreateExtension(Connection c) {
        try (Statement st = c.createStatement()) {
            st.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
            st.executeQuery("SELECT count(*) FROM pg_stat_statements").close();
            return true;
        } catch (SQLException e) {
            // not preloaded on this server (shared_preload_libraries): the WAL view only
            try (Statement st = c.createStatement()) {
                st.execute("DROP EXTENSION IF EXISTS pg_stat_statements");
            } catch (SQLException ignored) {
                // nothing was created
            }
            return false;
        }
    }

    private Connection connect() throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", "postgres");
        Connection c = DriverManager.getConnection(url, p);
        c.setAutoCommit(true);
        return c;
    }

    /** Waits out the cumulative statistics' flush delay (an idle backend flushes within 10 s). */
    static void settle() throws InterruptedException {
        Thread.sleep(11_000);
    }

    Snapshot snapshot() throws SQLException {
        Map<String, Query> byQuery = new HashMap<>();
        try (Connection c = connect(); Statement st = c.createStatement()) {
            if (statements) {
                try (ResultSet rs = st.executeQuery("""
                        SELECT queryid::text, query, calls, total_exec_time, rows FROM pg_stat_statements
                        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                        """)) {
                    while (rs.next()) {
                        byQuery.merge(rs.getString(1), new Query(rs.getString(2), rs.getLong(3), rs.getDouble(4),
                                rs.getLong(5)), (a, b) -> new Query(a.query(), a.calls() + b.calls(),
                                        a.totalMs() + b.totalMs(), a.rows() + b.rows()));
                    }
                }
            }
            Wal wal;
            try (ResultSet rs = st.executeQuery("""
                    SELECT wal_records, wal_fpi, wal_bytes, wal_write, wal_sync, wal_write_time, wal_sync_time
                    FROM pg_stat_wal
                    """)) {
                rs.next();
                wal = new Wal(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5),
                        rs.getDouble(6), rs.getDouble(7));
            }
            Map<String, Scans> tables = new java.util.TreeMap<>();
            try (java.sql.PreparedStatement ps = c.prepareStatement("""
                    SELECT relname, coalesce(seq_scan, 0), coalesce(seq_tup_read, 0), coalesce(idx_scan, 0)
                    FROM pg_stat_user_tables WHERE schemaname = ?
                    """)) {
                ps.setString(1, schema);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        tables.put(rs.getString(1), new Scans(rs.getLong(2), rs.getLong(3), rs.getLong(4)));
                    }
                }
            }
            return new Snapshot(byQuery, wal, tables);
        }
    }

    static Delta between(Snapshot before, Snapshot after) {
        List<Query> out = new ArrayList<>();
        after.statements().forEach((id, s) -> {
            Query b = before.statements().get(id);
            long calls = s.calls() - (b == null ? 0 : b.calls());
            if (calls > 0) {
                out.add(new Query(s.query(), calls, s.totalMs() - (b == null ? 0 : b.totalMs()),
                        s.rows() - (b == null ? 0 : b.rows())));
            }
        });
        out.sort(Comparator.comparingDouble(Query::totalMs).reversed());
        Map<String, Scans> tables = new java.util.TreeMap<>();
        after.tables().forEach((t, s) -> {
            Scans d = s.minus(before.tables().getOrDefault(t, new Scans(0, 0, 0)));
            if (d.seqScans() + d.indexScans() > 0) {
                tables.put(t, d);
            }
        });
        return new Delta(List.copyOf(out), after.wal().minus(before.wal()), tables);
    }

    /**
     * The statements that took at least 1 % of the execution time, as table rows: per call, and per {@code unit} of
     * work (a batch, a message) when {@code units} is positive.
     */
    static List<String> table(Delta d, long units, String unit) {
        List<String> lines = new ArrayList<>();
        double total = Math.max(1e-9, d.totalExecMs());
        lines.add("| statement (pg_stat_statements) | calls | ms per call | share of execution time | rows per call | calls per "
                + unit + " |");
        lines.add("|---|---|---|---|---|---|");
        for (Query s : d.statements()) {
            if (s.totalMs() / total < 0.01) {
                continue;
            }
            lines.add(String.format(Locale.ROOT, "| `%s` | %,d | %.3f | %.0f %% | %.1f | %.2f |", shorten(s.query()),
                    s.calls(), s.totalMs() / s.calls(), 100 * s.totalMs() / total, (double) s.rows() / s.calls(),
                    units > 0 ? (double) s.calls() / units : 0));
        }
        return lines;
    }

    /** A statement on one line, at most 90 characters. */
    static String shorten(String sql) {
        String one = sql.replaceAll("\\s+", " ").trim();
        return one.length() <= 90 ? one : one.substring(0, 87) + "...";
    }
}
