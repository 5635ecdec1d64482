package dev.idemkit.adapters.postgres;

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
 * The outbox as the relay and operators see it, on PostgreSQL table {@code outbox_messages} (appends: {@link
 * PostgresOutbox}).
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

    private static final String COLUMNS = """
            seq, id, destination, ordering_key,
            ARRAY(SELECT h.key FROM jsonb_each_text(headers) h ORDER BY h.key) AS header_names,
            ARRAY(SELECT h.value FROM jsonb_each_text(headers) h ORDER BY h.key) AS header_values,
            body, appended_at, attempt, failed_at, failed_errors, next_attempt_at, sent_at, parked_at, park_reason,
            redrive
            """;
    /**
     * The keys with unsent rows after a cursor key, each with its oldest unsent row (its head): a loose index scan over
     * the unsent rows' (ordering_key, seq) index that hops from key to key, O(keys x log rows) however deep a key's
     * backlog is. Within a key seq order is commit order (see {@link PostgresOutbox}), so the head is the one row of
     * its key that may go out now. Keys whose head is parked or waiting for its retry are passed over inside the scan
     * (a correlated check per key, so the scan stays lazy), so any number of them never fills a pass.
     */
    static final String HEAD_SCAN = """
            WITH RECURSIVE keys(ordering_key, seq) AS (
                (SELECT ordering_key, seq FROM outbox_messages
                 WHERE sent_at IS NULL AND ordering_key > ? ORDER BY ordering_key, seq LIMIT 1)
                UNION ALL
                SELECT n.ordering_key, n.seq FROM keys k CROSS JOIN LATERAL (
                    SELECT ordering_key, seq FROM outbox_messages
                    WHERE sent_at IS NULL AND ordering_key > k.ordering_key ORDER BY ordering_key, seq LIMIT 1) n
            )
            SELECT k.ordering_key, k.seq FROM keys k
            WHERE (SELECT o.parked_at IS NULL AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= ?)
                   FROM outbox_messages o WHERE o.seq = k.seq)
            LIMIT ?
            """;
    /** {@link #HEAD_SCAN} up to a key (included): the second scan of a pass, from the first key to where it began. */
    static final String HEAD_SCAN_UP_TO = """
            WITH RECURSIVE keys(ordering_key, seq) AS (
                (SELECT ordering_key, seq FROM outbox_messages
                 WHERE sent_at IS NULL AND ordering_key > ? AND ordering_key <= ? ORDER BY ordering_key, seq LIMIT 1)
                UNION ALL
                SELECT n.ordering_key, n.seq FROM keys k CROSS JOIN LATERAL (
                    SELECT ordering_key, seq FROM outbox_messages
                    WHERE sent_at IS NULL AND ordering_key > k.ordering_key AND ordering_key <= ?
                    ORDER BY ordering_key, seq LIMIT 1) n
            )
            SELECT k.ordering_key, k.seq FROM keys k
            WHERE (SELECT o.parked_at IS NULL AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= ?)
                   FROM outbox_messages o WHERE o.seq = k.seq)
            LIMIT ?
            """;
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
    static final String REDRIVE = """
            UPDATE outbox_messages
            SET parked_at = NULL, park_reason = NULL, next_attempt_at = NULL, attempt = 1, redrive = ?
            WHERE id = ? AND parked_at IS NOT NULL AND sent_at IS NULL
            """;
    /** Done without a publish: out of every relay's way; parked_at and its reason stay as the record of why (until retention). */
    static final String DISCARD = """
            UPDATE outbox_messages SET sent_at = clock_timestamp(), redrive = ?
            WHERE id = ? AND parked_at IS NOT NULL AND sent_at IS NULL
            """;
    static final String STATS = """
            SELECT count(*) FILTER (WHERE parked_at IS NULL), count(*) FILTER (WHERE parked_at IS NOT NULL),
                   min(appended_at) FILTER (WHERE parked_at IS NULL)
            FROM outbox_messages WHERE sent_at IS NULL
            """;
    static final String PURGE_SENT = """
            DELETE FROM outbox_messages
            WHERE ctid IN (SELECT ctid FROM outbox_messages WHERE sent_at < ? LIMIT ? FOR UPDATE SKIP LOCKED)
              AND sent_at < ?
            """;

    private final DataSource dataSource;
    private final String channel;
    private final Object listening = new Object();
    /** Where the next head scan starts (key order, wrapping round); per instance, a race on it is harmless. */
    private volatile String cursor = "";
    private Connection listener;
    private boolean listenFailedLogged;

    /** Opens the connection that LISTENs; it stays open, outside the pool. */
    @FunctionalInterface
    public interface ListenConnection {
        Connection open() throws SQLException;
    }

    private final ListenConnection listenConnection;

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
        this.channel = PostgresOutbox.channel(Objects.requireNonNull(schema, "schema"));
        this.listenConnection = Objects.requireNonNull(listen, "listen");
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
            List<Stored> heads = query(c, LOCK_HEADS, ps -> {
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
                List<Stored> followers = query(c, FOLLOWERS, ps -> {
                    ps.setArray(1, c.createArrayOf("text", headKeys));
                    ps.setArray(2, c.createArrayOf("bigint", headSeqs));
                    ps.setInt(3, perKey);
                });
                java.util.Set<String> stopped = new java.util.HashSet<>();
                for (Stored f : followers) {
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

    /** Longest error text kept per attempt. */
    static final int MAX_ERROR = 2000;

    /**
     * Error texts come from brokers and drivers and may hold anything: PostgreSQL refuses a NUL in text, and a refused
     * outcome would roll back the whole pass (rows the broker confirmed published again and again, the failing row never
     * parked). NULs become U+FFFD, the text is cut at {@link #MAX_ERROR} characters.
     */
    static String storable(String text) {
        String t = text.replace('\u0000', '\uFFFD');
        return t.length() <= MAX_ERROR ? t : t.substring(0, MAX_ERROR) + "...";
    }

    @Override
    public void awaitAppend(Duration max) throws InterruptedException {
        long millis = Math.max(1, Math.min(max.toMillis(), Integer.MAX_VALUE));
        synchronized (listening) {
            try {
                PGConnection pg = listen();
                PGNotification[] got = pg.getNotifications((int) millis);
                if (got != null && got.length > 0) {
                    LOG.debug("outbox woken by {} notification(s)", got.length);
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                return;
            } catch (SQLException e) {
                if (!listenFailedLogged) {
                    LOG.warn("outbox LISTEN on {} failed ({}); polling every {} ms until it works again", channel,
                            e.getMessage(), millis);
                    listenFailedLogged = true;
                }
                closeListener();
            }
        }
        Thread.sleep(millis);
    }

    private PGConnection listen() throws SQLException {
        if (listener == null || listener.isClosed()) {
            Connection c = listenConnection.open();
            try {
                c.setAutoCommit(true);
                try (Statement s = c.createStatement()) {
                    s.execute("LISTEN \"" + channel.replace("\"", "\"\"") + "\"");
                }
                listener = c;
                if (listenFailedLogged) {
                    LOG.info("outbox LISTEN on {} works again", channel);
                    listenFailedLogged = false;
                }
            } catch (SQLException | RuntimeException e) {
                c.close();
                throw e;
            }
        }
        return listener.unwrap(PGConnection.class);
    }

    private void closeListener() {
        if (listener != null) {
            try {
                listener.close();
            } catch (SQLException ignored) {
                // broken already
            }
            listener = null;
        }
    }

    /** Releases the LISTEN connection. */
    public void close() {
        synchronized (listening) {
            closeListener();
        }
    }

    @Override
    public List<OutboxEntry> parked(int max) {
        return entries("SELECT " + COLUMNS + " FROM outbox_messages WHERE parked_at IS NOT NULL AND sent_at IS NULL"
                + " ORDER BY seq LIMIT ?", max);
    }

    @Override
    public List<OutboxEntry> unsent(int max) {
        return entries("SELECT " + COLUMNS + " FROM outbox_messages WHERE sent_at IS NULL ORDER BY seq LIMIT ?", max);
    }

    private List<OutboxEntry> entries(String sql, int max) {
        return Sql.inTransaction(dataSource, "outbox list", c -> query(c, sql, ps -> ps.setInt(1, max)))
                .stream().map(Stored::entry).toList();
    }

    @Override
    public Optional<OutboxEntry> find(String id) {
        Optional<UUID> uuid = uuid(id);
        if (uuid.isEmpty()) {
            return Optional.empty();
        }
        return Sql.inTransaction(dataSource, "outbox find", c -> query(c, "SELECT " + COLUMNS
                + " FROM outbox_messages WHERE id = ?", ps -> ps.setObject(1, uuid.get())))
                .stream().findFirst().map(Stored::entry);
    }

    @Override
    public boolean redrive(String id, Approval approval) {
        Objects.requireNonNull(approval, "approval");
        Optional<UUID> uuid = uuid(id);
        if (uuid.isEmpty()) {
            return false;
        }
        return Sql.inTransaction(dataSource, "outbox redrive", c -> {
            try (PreparedStatement ps = c.prepareStatement(REDRIVE)) {
                ps.setString(1, "approved by " + approval.approvedBy() + " at " + approval.at() + ": "
                        + approval.reason());
                ps.setObject(2, uuid.get());
                boolean moved = ps.executeUpdate() == 1;
                if (moved) {
                    notifyRelays(c);
                }
                return moved;
            }
        });
    }

    @Override
    public boolean discard(String id, Approval approval) {
        Objects.requireNonNull(approval, "approval");
        Optional<UUID> uuid = uuid(id);
        if (uuid.isEmpty()) {
            return false;
        }
        return Sql.inTransaction(dataSource, "outbox discard", c -> {
            try (PreparedStatement ps = c.prepareStatement(DISCARD)) {
                ps.setString(1, storable(DISCARDED + approval.approvedBy() + " at " + approval.at() + ": "
                        + approval.reason()));
                ps.setObject(2, uuid.get());
                boolean done = ps.executeUpdate() == 1;
                if (done) {
                    notifyRelays(c); // the key's next row may go out now
                }
                return done;
            }
        });
    }

    private void notifyRelays(Connection c) throws SQLException {
        try (PreparedStatement n = c.prepareStatement("SELECT pg_notify(?, '')")) {
            n.setString(1, channel);
            n.execute();
        }
    }

    /** How a discarded row's record starts (its {@code redrive} column). */
    static final String DISCARDED = "discarded, never published, by ";

    @Override
    public Stats stats(Instant now) {
        return Sql.inTransaction(dataSource, "outbox stats", c -> {
            try (PreparedStatement ps = c.prepareStatement(STATS); ResultSet rs = ps.executeQuery()) {
                rs.next();
                Instant oldest = Sql.instant(rs, 3);
                return new Stats(rs.getLong(1), rs.getLong(2), Optional.ofNullable(oldest)
                        .map(t -> t.isBefore(now) ? Duration.between(t, now) : Duration.ZERO));
            }
        });
    }

    @Override
    public long purgeSent(Instant before, int batch, int maxBatches) {
        if (batch < 1 || maxBatches < 1) {
            throw new IllegalArgumentException("batch and max batches must be positive");
        }
        long total = 0;
        for (int i = 0; i < maxBatches; i++) {
            int n = Sql.inTransaction(dataSource, "outbox retention", c -> {
                try (PreparedStatement ps = c.prepareStatement(PURGE_SENT)) {
                    Sql.setInstant(ps, 1, before);
                    ps.setInt(2, batch);
                    Sql.setInstant(ps, 3, before);
                    return ps.executeUpdate();
                }
            });
            total += n;
            if (n < batch) {
                break;
            }
        }
        return total;
    }

    private static Optional<UUID> uuid(String id) {
        try {
            return Optional.of(UUID.fromString(Objects.requireNonNull(id, "id")));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    @FunctionalInterface
    private interface Binder {
        void bind(PreparedStatement ps) throws SQLException;
    }

    private static List<Stored> query(Connection c, String sql, Binder binder) throws SQLException {
        List<Stored> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            binder.bind(ps);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(read(rs));
                }
            }
        }
        return out;
    }

    /** A row with the columns the relay and operators need beside the message. */
    private record Stored(OutboxRow row, Optional<Instant> nextAttemptAt, Optional<Instant> sentAt,
            Optional<Instant> parkedAt, Optional<String> parkReason, Optional<String> redrive) {
        boolean dueAt(Instant now) {
            return parkedAt.isEmpty() && nextAttemptAt.map(t -> !t.isAfter(now)).orElse(true);
        }

        OutboxEntry entry() {
            OutboxEntry.State state = sentAt.isPresent() && parkedAt.isPresent() ? OutboxEntry.State.DISCARDED
                    : sentAt.isPresent() ? OutboxEntry.State.SENT
                    : parkedAt.isPresent() ? OutboxEntry.State.PARKED : OutboxEntry.State.PENDING;
            return new OutboxEntry(row, state, nextAttemptAt, sentAt, parkedAt, parkReason, redrive);
        }
    }

    private static Stored read(ResultSet rs) throws SQLException {
        String[] names = strings(rs.getArray("header_names"));
        String[] values = strings(rs.getArray("header_values"));
        Map<String, String> headers = new TreeMap<>();
        for (int i = 0; i < names.length; i++) {
            headers.put(names[i], values[i]);
        }
        OutboxMessage message = new OutboxMessage(rs.getString("destination"), rs.getString("ordering_key"), headers,
                rs.getBytes("body"));
        List<AttemptRecord> failures = new ArrayList<>();
        Array at = rs.getArray("failed_at");
        String[] errors = strings(rs.getArray("failed_errors"));
        if (at != null) {
            Object[] times = (Object[]) at.getArray();
            for (int i = 0; i < times.length; i++) {
                failures.add(new AttemptRecord(i + 1, instantOf(times[i]), errors[i]));
            }
        }
        OutboxRow row = new OutboxRow(rs.getString("id"), rs.getLong("seq"), message,
                rs.getObject("appended_at", java.time.OffsetDateTime.class).toInstant(), rs.getInt("attempt"), failures);
        return new Stored(row, optionalInstant(rs, "next_attempt_at"), optionalInstant(rs, "sent_at"),
                optionalInstant(rs, "parked_at"), Optional.ofNullable(rs.getString("park_reason")),
                Optional.ofNullable(rs.getString("redrive")));
    }

    private static Optional<Instant> optionalInstant(ResultSet rs, String column) throws SQLException {
        java.time.OffsetDateTime t = rs.getObject(column, java.time.OffsetDateTime.class);
        return Optional.ofNullable(t).map(java.time.OffsetDateTime::toInstant);
    }

    private static Instant instantOf(Object o) {
        if (o instanceof java.sql.Timestamp ts) {
            return ts.toInstant();
        }
        if (o instanceof java.time.OffsetDateTime t) {
            return t.toInstant();
        }
        throw new IllegalStateException("unexpected timestamp type " + (o == null ? "null" : o.getClass().getName()));
    }

    private static String[] strings(Array a) throws SQLException {
        return a == null ? new String[0] : (String[]) a.getArray();
    }
}
