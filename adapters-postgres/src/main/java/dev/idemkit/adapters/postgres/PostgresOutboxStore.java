package dev.idemkit.adapters.postgres;

import static dev.idemkit.adapters.postgres.OutboxRows.COLUMNS;
import static dev.idemkit.adapters.postgres.OutboxRows.query;
import static dev.idemkit.adapters.postgres.OutboxRows.storable;

import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.out.OutboxEntry;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.out.OutboxRow;
import dev.idemkit.ports.out.OutboxStore;
import dev.idemkit.ports.out.RelayOutcome;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The outbox on PostgreSQL table {@code outbox_messages} (appends: {@link PostgresOutbox}): the relay's hand-out here,
 * its wake-up in {@link OutboxListener}, the operators' actions in {@link PostgresParkedOutbox}, counts and retention in
 * {@link PostgresOutboxMaintenance}, the rows' reading in {@link OutboxRows}.
 *
 * <p>Atomic step: {@link #HEAD_SCAN} finds each key's oldest unsent row, {@link #LOCK_HEADS} locks those that are due
 * ({@code FOR UPDATE SKIP LOCKED}), then {@link #FOLLOWERS} of the same keys; all held by this transaction while the
 * publisher runs; the outcomes are written and committed in that same transaction. Another relay skips the held heads, and the
 * rows after them are not heads for it, so a key is relayed by one relay at a time, in seq order (= commit order, see
 * {@link PostgresOutbox}). A parked row is unsent: the rows after it wait. Wake-up: {@code LISTEN} on the schema's
 * channel on a connection of its own, polling when that fails. Thread-safe.
 */
public final class PostgresOutboxStore implements OutboxStore {
    private static final Logger LOG = LoggerFactory.getLogger(PostgresOutboxStore.class);

    /**
     * The keys with unsent rows after a cursor key, each with its oldest unsent row (its head): a loose index scan over
     * the unsent rows' (ordering_key, seq) index that hops from key to key, O(keys x log rows) however deep a key's
     * backlog is. Within a key seq order is commit order (see {@link PostgresOutbox}), so the head is the one row of
     * its key that may go out now. Keys whose head is parked or waiting for its retry are passed over inside the scan
     * (a correlated check per key, so the scan stays lazy), so any number of them never fills a pass.
     */
    static final String HEAD_SCAN = headScan("");
    /** {@link #HEAD_SCAN} up to a key (included): the second scan of a pass, from the first key to where it began. */
    static final String HEAD_SCAN_UP_TO = headScan(" AND ordering_key <= ?");

    /** The head scan, its key range bounded above by {@code upTo} (empty: unbounded), in both of its steps. */
    private static String headScan(String upTo) {
        return """
                WITH RECURSIVE keys(ordering_key, seq) AS (
                    (SELECT ordering_key, seq FROM outbox_messages
                     WHERE sent_at IS NULL AND ordering_key > ?%1$s ORDER BY ordering_key, seq LIMIT 1)
                    UNION ALL
                    SELECT n.ordering_key, n.seq FROM keys k CROSS JOIN LATERAL (
                        SELECT ordering_key, seq FROM outbox_messages
                        WHERE sent_at IS NULL AND ordering_key > k.ordering_key%1$s
                        ORDER BY ordering_key, seq LIMIT 1) n
                )
                SELECT k.ordering_key, k.seq FROM keys k
                WHERE (SELECT o.parked_at IS NULL AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= ?)
                       FROM outbox_messages o WHERE o.seq = k.seq)
                LIMIT ?
                """.formatted(upTo);
    }
    /**
     * The heads that are due and that no other relay holds, locked. A head another relay marked sent since the scan's
     * snapshot is dropped by the lock's recheck of {@code sent_at IS NULL}; the row after it waits for the next pass.
     */
    static final String LOCK_HEADS = "SELECT " + COLUMNS.replace("seq, id,", "o.seq, id,") + """
            FROM unnest(?::bigint[]) AS h(seq) JOIN outbox_messages o ON o.seq = h.seq
            WHERE o.sent_at IS NULL AND o.parked_at IS NULL
              AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= ?)
            ORDER BY o.ordering_key
            FOR UPDATE OF o SKIP LOCKED
            """;
    /**
     * Up to {@code per key} unsent rows after each held head, in order, found through the (ordering_key, seq) index key
     * by key (never the whole backlog of a key); a key's run stops at its first row that is not due.
     */
    static final String FOLLOWERS = "SELECT " + COLUMNS + """
            FROM outbox_messages
            WHERE seq IN (SELECT f.seq FROM unnest(?::text[], ?::bigint[]) AS h(ordering_key, seq)
                          CROSS JOIN LATERAL (SELECT o.seq FROM outbox_messages o
                                              WHERE o.ordering_key = h.ordering_key AND o.sent_at IS NULL AND o.seq > h.seq
                                              ORDER BY o.seq LIMIT ?) f)
            ORDER BY seq
            FOR UPDATE
            """;
    /**
     * The rows by primary key, through a join with the array: with {@code seq = ANY(?)} and no statistics yet, the
     * planner chose the unsent-rows index (seq is its second column) and scanned every unsent row, per pass.
     */
    static final String MARK_SENT = """
            UPDATE outbox_messages o SET sent_at = ?
            FROM unnest(?::bigint[]) AS h(seq)
            WHERE o.seq = h.seq AND o.sent_at IS NULL
            """;
    static final String MARK_FAILED = """
            UPDATE outbox_messages
            SET attempt = attempt + 1, failed_at = array_append(failed_at, ?), failed_errors = array_append(failed_errors, ?),
                next_attempt_at = ?
            WHERE seq = ?
            """;
    static final String MARK_PARKED = """
            UPDATE outbox_messages
            SET attempt = attempt + 1, failed_at = array_append(failed_at, ?), failed_errors = array_append(failed_errors, ?),
                next_attempt_at = NULL, parked_at = ?, park_reason = ?
            WHERE seq = ?
            """;
    private final DataSource dataSource;
    /** Where the next head scan starts (key order, wrapping round); per instance, a race on it is harmless. */
    private volatile String cursor = "";
    private final OutboxListener listener;
    private final PostgresParkedOutbox parked;
    private final PostgresOutboxMaintenance maintenance;

    /** Opens the connection that LISTENs; it stays open, outside the pool. */
    @FunctionalInterface
    public interface ListenConnection {
        Connection open() throws SQLException;
    }

    public PostgresOutboxStore(PostgresDatabase db) {
        this(db.dataSource(), db.schema(), db::openUnpooled);
    }

    /**
     * On a data source whose connections' search path reaches {@code outbox_messages} in {@code schema}; {@code listen}
     * opens the one connection that waits for commit notifications, which should not come from a pool (it is never
     * given back while the store is open).
     */
    public PostgresOutboxStore(DataSource dataSource, String schema, ListenConnection listen) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        String channel = PostgresOutbox.channel(Objects.requireNonNull(schema, "schema"));
        this.listener = new OutboxListener(channel, Objects.requireNonNull(listen, "listen"));
        this.parked = new PostgresParkedOutbox(dataSource, channel);
        this.maintenance = new PostgresOutboxMaintenance(dataSource);
    }

    @Override
    public void awaitAppend(Duration max) throws InterruptedException {
        listener.awaitAppend(max);
    }

    /** Releases the LISTEN connection. */
    public void close() {
        listener.close();
    }

    @Override
    public List<OutboxEntry> parked(int max) {
        return parked.parked(max);
    }

    @Override
    public List<OutboxEntry> unsent(int max) {
        return parked.unsent(max);
    }

    @Override
    public Optional<OutboxEntry> find(String id) {
        return parked.find(id);
    }

    @Override
    public boolean redrive(String id, Approval approval) {
        return parked.redrive(id, approval);
    }

    @Override
    public boolean discard(String id, Approval approval) {
        return parked.discard(id, approval);
    }

    @Override
    public Stats stats(Instant now) {
        return maintenance.stats(now);
    }

    @Override
    public long purgeSent(Instant before, int batch, int maxBatches) {
        return maintenance.purgeSent(before, batch, maxBatches);
    }

    @Override
    public int relay(int max, Instant now, Publisher publisher) {
        if (max < 1) {
            throw new IllegalArgumentException("max must be positive, got " + max);
        }
        Objects.requireNonNull(now, "now");
        Objects.requireNonNull(publisher, "publisher");
        return Sql.inTransaction(dataSource, "outbox relay", c -> {
            Map<String, Long> scanned = new LinkedHashMap<>();
            String start = cursor;
            boolean wrapped = scan(c, HEAD_SCAN, start, null, max, now, scanned);
            String last = scanned.keySet().stream().reduce((a, b) -> b).orElse("");
            if (wrapped && !start.isEmpty() && scanned.size() < max) {
                // the keys up to where this pass started, in the same pass; the next pass goes on after the last taken
                int before = scanned.size();
                wrapped = scan(c, HEAD_SCAN_UP_TO, "", start, max - scanned.size(), now, scanned);
                if (scanned.size() > before) {
                    last = scanned.keySet().stream().reduce((a, b) -> b).orElse("");
                }
            }
            cursor = wrapped ? "" : last;
            if (scanned.isEmpty()) {
                return 0;
            }
            List<OutboxRows.Stored> heads = query(c, LOCK_HEADS, ps -> {
                ps.setArray(1, c.createArrayOf("bigint", scanned.values().toArray()));
                Sql.setInstant(ps, 2, now);
            });
            if (heads.isEmpty()) {
                return 0;
            }
            Map<String, List<OutboxRow>> runs = new LinkedHashMap<>();
            String[] headKeys = new String[heads.size()];
            Long[] headSeqs = new Long[heads.size()];
            for (int i = 0; i < heads.size(); i++) {
                runs.put(heads.get(i).row().message().orderingKey(), new ArrayList<>(List.of(heads.get(i).row())));
                headKeys[i] = heads.get(i).row().message().orderingKey();
                headSeqs[i] = heads.get(i).row().seq();
            }
            int handed = heads.size();
            if (handed < max) {
                int perKey = Math.max(1, (max - handed) / handed);
                List<OutboxRows.Stored> followers = query(c, FOLLOWERS, ps -> {
                    ps.setArray(1, c.createArrayOf("text", headKeys));
                    ps.setArray(2, c.createArrayOf("bigint", headSeqs));
                    ps.setInt(3, perKey);
                });
                java.util.Set<String> stopped = new java.util.HashSet<>();
                for (OutboxRows.Stored f : followers) {
                    String key = f.row().message().orderingKey();
                    if (stopped.contains(key) || handed >= max) {
                        continue;
                    }
                    if (!f.dueAt(now)) {
                        stopped.add(key); // a run is a prefix: nothing after a row that must wait
                        continue;
                    }
                    runs.get(key).add(f.row());
                    handed++;
                }
            }
            Map<String, RelayOutcome> outcomes = publisher.publish(List.copyOf(runs.values()));
            record(c, runs, outcomes);
            return handed;
        });
    }

    /**
     * Adds up to {@code limit} (key, head seq) of keys after {@code from} (and up to {@code upTo}, with
     * {@link #HEAD_SCAN_UP_TO}) whose head may go out now.
     *
     * @return whether the scan reached its last key (fewer than asked were there)
     */
    private static boolean scan(Connection c, String sql, String from, String upTo, int limit, Instant now,
            Map<String, Long> into) throws SQLException {
        int found = 0;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            int i = 1;
            ps.setString(i++, from);
            if (upTo != null) {
                ps.setString(i++, upTo);
                ps.setString(i++, upTo);
            }
            Sql.setInstant(ps, i++, now);
            ps.setInt(i, limit);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    found++;
                    into.putIfAbsent(rs.getString(1), rs.getLong(2));
                }
            }
        }
        return found < limit;
    }

    private static void record(Connection c, Map<String, List<OutboxRow>> runs, Map<String, RelayOutcome> outcomes)
            throws SQLException {
        List<Long> sent = new ArrayList<>();
        Instant sentAt = null;
        try (PreparedStatement failed = c.prepareStatement(MARK_FAILED);
                PreparedStatement parked = c.prepareStatement(MARK_PARKED)) {
            int failures = 0;
            int parks = 0;
            for (List<OutboxRow> run : runs.values()) {
                for (OutboxRow row : run) {
                    RelayOutcome o = outcomes.get(row.id());
                    if (o instanceof RelayOutcome.Sent s) {
                        sent.add(row.seq());
                        sentAt = sentAt == null || s.at().isAfter(sentAt) ? s.at() : sentAt;
                    } else if (o instanceof RelayOutcome.Failed f) {
                        Sql.setInstant(failed, 1, f.failed().at());
                        failed.setString(2, storable(f.failed().error()));
                        Sql.setInstant(failed, 3, f.retryAt());
                        failed.setLong(4, row.seq());
                        failed.addBatch();
                        failures++;
                    } else if (o instanceof RelayOutcome.Parked p) {
                        Sql.setInstant(parked, 1, p.failed().at());
                        parked.setString(2, storable(p.failed().error()));
                        Sql.setInstant(parked, 3, p.failed().at());
                        parked.setString(4, storable(p.reason()));
                        parked.setLong(5, row.seq());
                        parked.addBatch();
                        parks++;
                    }
                }
            }
            if (failures > 0) {
                failed.executeBatch();
            }
            if (parks > 0) {
                parked.executeBatch();
            }
        }
        if (!sent.isEmpty()) {
            try (PreparedStatement ps = c.prepareStatement(MARK_SENT)) {
                Sql.setInstant(ps, 1, sentAt);
                ps.setArray(2, c.createArrayOf("bigint", sent.toArray()));
                ps.executeUpdate();
            }
        }
    }
}
