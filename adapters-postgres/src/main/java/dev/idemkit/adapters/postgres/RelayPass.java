package dev.idemkit.adapters.postgres;

import static dev.idemkit.adapters.postgres.OutboxRows.COLUMNS;
import static dev.idemkit.adapters.postgres.OutboxRows.query;
import static dev.idemkit.adapters.postgres.OutboxRows.storable;

import dev.idemkit.ports.out.OutboxRelayStore;
import dev.idemkit.ports.out.OutboxRow;
import dev.idemkit.ports.out.RelayOutcome;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.BiConsumer;

/**
 * One relay pass on PostgreSQL, in one transaction on one connection (docs/ARCHITECTURE.md section 9): its first
 * hand-out, then, while the publisher publishes, what it asks for and the outcomes it hands over, run one after the
 * other on a worker thread of the pass's own (the connection is never used by two threads at once), committed by
 * {@link PostgresOutboxStore} when the publisher returns.
 *
 * <p>Keys: a hand-out of new keys goes on through the key space from where the last one stopped (the store's cursor
 * when the pass began), once round at most, so it never meets a key this pass holds. A held key's next rows are the
 * unsent rows after the last one handed out for it: no other relay can take them, since the key's head is locked by
 * this transaction until it commits (its "sent" mark too, so every other relay still sees the head as unsent, and
 * skips it); they include rows committed after the pass began. Not thread-safe: the pass's thread
 * uses it before {@link #start} and after {@link #finish}, the worker in between.
 */
final class RelayPass implements OutboxRelayStore.Pass {
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

    /** The scan's progress through the key space in this pass. */
    private enum Phase { AFTER_START, UP_TO_START, DONE }

    private final Connection c;
    private final Instant now;
    private final int max;
    private final String start;
    private final PostgresOutboxStore.Cursor cursor;
    private Phase phase = Phase.AFTER_START;
    private String from;
    /** Per held key, the seq of the last row handed out for it. */
    private final Map<String, Long> held = new HashMap<>();
    /** The seq of every row handed out, by id (outcomes come by id). */
    private final Map<String, Long> seqs = new HashMap<>();
    /** The key of every row handed out, by id. */
    private final Map<String, String> keyOf = new HashMap<>();
    /** The ids whose outcome was written: a second one for the same row is ignored. */
    private final Set<String> recorded = new HashSet<>();
    /** A step of the worker's. */
    @FunctionalInterface
    private interface Task {
        void run() throws SQLException;
    }

    private final LinkedBlockingQueue<Task> tasks = new LinkedBlockingQueue<>();
    private static final Task END = () -> {};
    private Future<?> worker;
    private volatile Throwable failure;

    RelayPass(Connection c, Instant now, int max, PostgresOutboxStore.Cursor cursor) {
        this.c = c;
        this.now = now;
        this.max = max;
        this.cursor = cursor;
        this.start = cursor.get();
        this.from = start;
    }

    int handed() {
        return seqs.size();
    }

    /**
     * Hands out up to {@code rows}: the next rows of those of {@code keys} that this pass holds and that may have
     * more, spread evenly, then heads (and the rows after them) of keys not held yet.
     */
    List<List<OutboxRow>> handOut(Collection<String> keys, int rows) throws SQLException {
        return handOut(keys, rows, true);
    }

    /**
     * {@link #handOut(Collection, int)}; without {@code behindHeads}, new keys come as their heads alone (the first
     * hand-out of a pass that goes on: the rows behind come with its first ask, while the heads are published).
     */
    List<List<OutboxRow>> handOut(Collection<String> keys, int rows, boolean behindHeads) throws SQLException {
        int budget = Math.min(rows, max - seqs.size());
        if (budget <= 0) {
            return List.of();
        }
        Map<String, List<OutboxRow>> runs = new LinkedHashMap<>();
        Set<String> distinct = new java.util.LinkedHashSet<>();
        for (String k : keys) {
            if (held.containsKey(k)) {
                distinct.add(k);
            }
        }
        List<String> going = new ArrayList<>(distinct);
        int n = 0;
        if (!going.isEmpty()) {
            n += next(going, Math.max(1, budget / going.size()), budget, runs);
        }
        if (n < budget && phase != Phase.DONE) {
            n += newKeys(budget - n, runs, behindHeads);
        }
        return List.copyOf(runs.values());
    }

    /** Heads of keys after {@code from} in this pass's round, locked, and the rows after them. */
    private int newKeys(int budget, Map<String, List<OutboxRow>> runs, boolean behindHeads) throws SQLException {
        Map<String, Long> scanned = new LinkedHashMap<>();
        if (phase == Phase.AFTER_START) {
            boolean reachedEnd = scan(HEAD_SCAN, from, null, budget, scanned);
            advance(scanned);
            if (reachedEnd) {
                phase = start.isEmpty() ? Phase.DONE : Phase.UP_TO_START;
                from = "";
            }
        }
        if (phase == Phase.UP_TO_START && scanned.size() < budget) {
            Map<String, Long> more = new LinkedHashMap<>();
            boolean reachedEnd = scan(HEAD_SCAN_UP_TO, from, start, budget - scanned.size(), more);
            advance(more);
            scanned.putAll(more);
            if (reachedEnd) {
                phase = Phase.DONE;
            }
        }
        cursor.set(phase == Phase.DONE ? "" : from);
        if (scanned.isEmpty()) {
            return 0;
        }
        List<OutboxRows.Stored> heads = query(c, LOCK_HEADS, ps -> {
            ps.setArray(1, c.createArrayOf("bigint", scanned.values().toArray()));
            Sql.setInstant(ps, 2, now);
        });
        List<String> headKeys = new ArrayList<>();
        for (OutboxRows.Stored h : heads) {
            OutboxRow row = h.row();
            String key = row.message().orderingKey();
            runs.computeIfAbsent(key, k -> new ArrayList<>()).add(row);
            handed(key, row);
            headKeys.add(key);
        }
        int n = heads.size();
        if (behindHeads && !headKeys.isEmpty() && n < budget) {
            n += next(headKeys, Math.max(1, (budget - n) / headKeys.size()), budget - n, runs);
        }
        return n;
    }

    private void advance(Map<String, Long> scanned) {
        for (String k : scanned.keySet()) {
            from = k; // in key order: the last is the furthest
        }
    }

    /**
     * Up to {@code perKey} rows after the last handed out of each key of {@code keys} (held by this pass), at most
     * {@code budget} in all; a key's run stops at its first row that is not due.
     */
    private int next(List<String> keys, int perKey, int budget, Map<String, List<OutboxRow>> runs)
            throws SQLException {
        String[] names = keys.toArray(String[]::new);
        Long[] after = new Long[names.length];
        for (int i = 0; i < names.length; i++) {
            after[i] = held.get(names[i]);
        }
        List<OutboxRows.Stored> rows = query(c, FOLLOWERS, ps -> {
            ps.setArray(1, c.createArrayOf("text", names));
            ps.setArray(2, c.createArrayOf("bigint", after));
            ps.setInt(3, perKey);
        });
        Set<String> stopped = new HashSet<>();
        int n = 0;
        for (OutboxRows.Stored f : rows) {
            String key = f.row().message().orderingKey();
            if (stopped.contains(key)) {
                continue;
            }
            if (n >= budget || !f.dueAt(now)) {
                stopped.add(key); // a run is a prefix: nothing after a row that must wait (or past the budget)
                continue;
            }
            runs.computeIfAbsent(key, k -> new ArrayList<>()).add(f.row());
            handed(key, f.row());
            n++;
        }
        return n;
    }

    private void handed(String key, OutboxRow row) {
        held.put(key, row.seq());
        seqs.put(row.id(), row.seq());
        keyOf.put(row.id(), key);
    }

    /**
     * Adds up to {@code limit} (key, head seq) of keys after {@code after} (and up to {@code upTo}, with
     * {@link #HEAD_SCAN_UP_TO}) whose head may go out now.
     *
     * @return whether the scan reached its last key (fewer than asked were there)
     */
    private boolean scan(String sql, String after, String upTo, int limit, Map<String, Long> into)
            throws SQLException {
        int found = 0;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            int i = 1;
            ps.setString(i++, after);
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

    /**
     * Writes outcomes of rows this pass handed out (others, and a second outcome of a row, are ignored). A key with a
     * failed or parked row is asked for no more in this pass.
     */
    void write(Map<String, RelayOutcome> outcomes) throws SQLException {
        List<Long> sent = new ArrayList<>();
        Instant sentAt = null;
        try (PreparedStatement failed = c.prepareStatement(MARK_FAILED);
                PreparedStatement parked = c.prepareStatement(MARK_PARKED)) {
            int failures = 0;
            int parks = 0;
            for (Map.Entry<String, RelayOutcome> e : outcomes.entrySet()) {
                Long seq = seqs.get(e.getKey());
                if (seq == null || !recorded.add(e.getKey())) {
                    continue; // not this pass's row, or recorded already (a failure counts one attempt, once)
                }
                RelayOutcome o = e.getValue();
                if (!(o instanceof RelayOutcome.Sent)) {
                    held.remove(keyOf.get(e.getKey())); // a failed key: nothing more of it in this pass
                }
                if (o instanceof RelayOutcome.Sent s) {
                    sent.add(seq);
                    sentAt = sentAt == null || s.at().isAfter(sentAt) ? s.at() : sentAt;
                } else if (o instanceof RelayOutcome.Failed f) {
                    Sql.setInstant(failed, 1, f.failed().at());
                    failed.setString(2, storable(f.failed().error()));
                    Sql.setInstant(failed, 3, f.retryAt());
                    failed.setLong(4, seq);
                    failed.addBatch();
                    failures++;
                } else if (o instanceof RelayOutcome.Parked p) {
                    Sql.setInstant(parked, 1, p.failed().at());
                    parked.setString(2, storable(p.failed().error()));
                    Sql.setInstant(parked, 3, p.failed().at());
                    parked.setString(4, storable(p.reason()));
                    parked.setLong(5, seq);
                    parked.addBatch();
                    parks++;
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

    /**
     * From here until {@link #finish}, the connection is the worker's: asks and outcomes run there, in call order. A task
     * that fails (an Error too: a hand-out of large bodies out of memory) is the pass's failure; the worker goes on, so
     * that every ask after it is answered (with that failure) and the pass can end.
     */
    void start(ExecutorService workers) {
        worker = workers.submit(() -> {
            while (true) {
                Task task;
                try {
                    task = tasks.take();
                } catch (InterruptedException e) {
                    // the pool is being shut down under a pass: serve it to its end all the same, every ask answered
                    fail(e);
                    continue;
                }
                if (task == END) {
                    return null;
                }
                try {
                    task.run();
                } catch (Throwable t) {
                    fail(t);
                }
            }
        });
    }

    private void fail(Throwable t) {
        if (failure == null) {
            failure = t;
        }
    }

    @Override
    public boolean failed() {
        return failure != null;
    }

    @Override
    public void more(Collection<String> keys, int rows, BiConsumer<List<List<OutboxRow>>, Throwable> answer) {
        List<String> asked = List.copyOf(keys);
        tasks.add(() -> {
            List<List<OutboxRow>> runs = null;
            try {
                if (failure == null) {
                    runs = handOut(asked, rows);
                }
            } catch (Throwable t) {
                fail(t);
            } finally {
                Throwable f = failure;
                try {
                    answer.accept(f == null ? runs : null, f);
                } catch (Throwable t) {
                    fail(t); // the publisher's callback failed: the pass cannot trust what it knows
                }
            }
        });
    }

    @Override
    public void record(Map<String, RelayOutcome> outcomes) {
        tasks.add(() -> { // the publisher hands the map over and never touches it again
            if (failure == null) {
                write(outcomes);
            }
        });
    }

    /**
     * Waits until the worker has run everything it was given (an interrupt is kept for after), then gives the
     * connection back to the pass's thread.
     *
     * @throws SQLException the first failure of the worker: the pass must not commit
     */
    void finish() throws SQLException {
        if (worker != null) {
            tasks.add(END);
            boolean interrupted = false;
            while (true) {
                try {
                    worker.get();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) { // cannot happen: the worker catches everything
                    fail(e.getCause());
                    break;
                }
            }
            worker = null;
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        Throwable f = failure;
        if (f instanceof SQLException e) {
            throw e;
        }
        if (f instanceof RuntimeException e) {
            throw e;
        }
        if (f instanceof Error e) {
            throw e;
        }
        if (f != null) {
            throw new SQLException("outbox pass failed", f);
        }
    }
}
