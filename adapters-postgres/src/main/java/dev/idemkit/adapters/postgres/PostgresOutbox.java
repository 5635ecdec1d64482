package dev.idemkit.adapters.postgres;

import dev.idemkit.ports.out.Outbox;
import dev.idemkit.ports.out.OutboxMessage;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Objects;
import java.util.TreeMap;
import java.util.UUID;

/**
 * The outbox's append on PostgreSQL, table {@code outbox_messages}: in idemkit's unit of work ({@link
 * #append(JpaUnitOfWork, OutboxMessage)}) or in a JDBC transaction the caller owns ({@link #append(Connection,
 * OutboxMessage)}), never committing it.
 *
 * <p>Atomic step: one statement, {@link #APPEND}: a transaction-scoped advisory lock on the ordering key (held until
 * the caller's transaction ends), then the row (its {@code seq} drawn after the lock, so within a key seq order is
 * commit order) and a {@code pg_notify} that PostgreSQL delivers to waiting relays only if the transaction commits (at
 * most one every 5 ms from one instance of this class: see {@link #NOTIFY_EVERY_NANOS}).
 * Thread-safe.
 */
public final class PostgresOutbox implements Outbox<JpaUnitOfWork> {
    /** The advisory lock's first key: idemkit's outbox ordering keys, apart from other users of advisory locks. */
    static final int LOCK_SPACE = 0x1de0b0c5;

    /**
     * Lock, insert and notify in one round trip. The lock is taken in the FROM item, evaluated before the row's
     * identity default is drawn (a sub-select with a volatile function is not flattened into the insert's projection).
     */
    static final String APPEND = """
            INSERT INTO outbox_messages (id, destination, ordering_key, headers, body)
            SELECT ?, ?, ?, jsonb_object(?::text[], ?::text[]), ?
            FROM (SELECT pg_advisory_xact_lock(?, hashtext(?)), CASE WHEN ? THEN pg_notify(?, '') END) AS locked
            """;
    /**
     * {@link #APPEND}, then the commit, in one round trip (pgjdbc sends both with one sync; a failed insert skips the
     * commit and the transaction is rolled back).
     */
    static final String APPEND_AND_COMMIT = APPEND + ";\nCOMMIT";
    /**
     * At most one notification per this many nanoseconds from one instance (share one per process). PostgreSQL serializes the commits of
     * transactions that NOTIFY (a database-wide lock held until the commit is flushed), which cut concurrent appending
     * transactions to a third here; a relay that was just woken goes on polling briefly ({@code OutboxRelay}), and its
     * poll interval bounds the wait of any row whose notification was skipped.
     */
    static final long NOTIFY_EVERY_NANOS = 5_000_000;

    /** Ids must never collide across processes: a strong source, as {@code UUID.randomUUID} uses. */
    private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();

    /**
     * The locks of several keys in one statement, in the order of the locks themselves (their hash), so that any two
     * units of work appending to several keys take them in the same order; evaluated after the sort (PostgreSQL
     * projects volatile functions above the ORDER BY).
     */
    static final String LOCK_ALL = """
            SELECT pg_advisory_xact_lock(?, h) FROM (SELECT DISTINCT hashtext(k) AS h FROM unnest(?::text[]) AS k) s
            ORDER BY h
            """;

    private final String channel;
    private final java.util.concurrent.atomic.AtomicLong lastNotify = new java.util.concurrent.atomic.AtomicLong(
            System.nanoTime() - NOTIFY_EVERY_NANOS);

    /** @param schema the schema of {@code outbox_messages}: relays of that schema are woken */
    public PostgresOutbox(String schema) {
        this.channel = channel(Objects.requireNonNull(schema, "schema"));
    }

    public PostgresOutbox(PostgresDatabase db) {
        this(db.schema());
    }

    /** The notification channel of a schema's outbox. */
    static String channel(String schema) {
        String plain = "idemkit_outbox_" + schema;
        // a channel name is an identifier: at most 63 bytes, or pg_notify refuses it
        return plain.getBytes(java.nio.charset.StandardCharsets.UTF_8).length <= 63 ? plain
                : "idemkit_outbox_" + Integer.toHexString(schema.hashCode());
    }

    /**
     * Appends in idemkit's unit of work: the row is written when the unit of work commits, in the commit's own round
     * trip when it is the only one (the statement and {@code COMMIT} go together), so an effect's transaction pays for
     * the append's work in the database but not for a round trip of its own (OutboxBenchmark case 1). Its key's lock is
     * taken and its seq drawn right before the commit, so within a key seq order is still commit order. The id is known
     * at once. A statement the effect runs after the append ({@link JpaUnitOfWork#connection()}), an {@link #appendAll}
     * or a {@link #lockKeys} has it written first, in order. A failure to write it fails the unit of work (nothing of it
     * is kept).
     */
    @Override
    public String append(JpaUnitOfWork work, OutboxMessage message) {
        Objects.requireNonNull(work, "work");
        Objects.requireNonNull(message, "message");
        UUID id = timeOrderedUuid();
        work.atCommit(new AtCommit(message, id));
        return id.toString();
    }

    /** An append that waits for its unit of work's commit. */
    private final class AtCommit implements JpaUnitOfWork.AtCommit {
        private final OutboxMessage message;
        private final UUID id;

        AtCommit(OutboxMessage message, UUID id) {
            this.message = message;
            this.id = id;
        }

        @Override
        public void run(Connection c) throws SQLException {
            insert(c, APPEND, message, id);
        }

        @Override
        public void runAndCommit(Connection c) throws SQLException {
            insert(c, APPEND_AND_COMMIT, message, id);
        }

        @Override
        public void runAll(Connection c, java.util.List<JpaUnitOfWork.AtCommit> all) throws SQLException {
            java.util.Set<String> keys = new java.util.TreeSet<>();
            for (JpaUnitOfWork.AtCommit a : all) {
                if (!(a instanceof AtCommit append)) {
                    throw new IllegalStateException("not an outbox append: " + a.getClass().getName());
                }
                keys.add(append.message.orderingKey());
            }
            if (keys.size() > 1) {
                lockAll(c, keys); // in lock order first, as appendAll does: two such commits never deadlock
            }
            for (JpaUnitOfWork.AtCommit a : all) {
                a.run(c);
            }
        }
    }

    /**
     * Takes the append locks of {@code orderingKeys} now, in lock order, for a unit of work that will append to several
     * of them one by one (held to its end, like an append's own): so it cannot deadlock with another doing the same.
     */
    public void lockKeys(JpaUnitOfWork work, java.util.Collection<String> orderingKeys) {
        Objects.requireNonNull(work, "work");
        if (orderingKeys.size() < 2) {
            return;
        }
        work.writePending(); // an append made before keeps its place: written before the locks are taken
        try {
            lockAll(work.rawConnection(), orderingKeys);
        } catch (SQLException e) {
            throw Sql.unavailable("outbox lock", e);
        }
    }

    private static void lockAll(Connection c, java.util.Collection<String> keys) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(LOCK_ALL)) {
            ps.setInt(1, LOCK_SPACE);
            ps.setArray(2, c.createArrayOf("text", keys.toArray()));
            ps.executeQuery().close();
        }
    }

    /**
     * Appends several messages, taking every key's lock first in one statement, ordered by the lock itself: two units of
     * work doing this never deadlock on each other, even for keys whose locks collide (the lock is a 32-bit hash).
     */
    @Override
    public java.util.List<String> appendAll(JpaUnitOfWork work, java.util.List<OutboxMessage> messages) {
        Objects.requireNonNull(work, "work");
        work.writePending(); // written at once (several keys' locks in lock order): an earlier append goes first
        try {
            return insertAll(work.rawConnection(), messages);
        } catch (SQLException e) {
            throw Sql.unavailable("outbox append", e);
        }
    }

    /** {@link #appendAll(JpaUnitOfWork, java.util.List)} in the caller's JDBC transaction (see {@link #append(Connection, OutboxMessage)}). */
    public java.util.List<String> appendAll(Connection connection, java.util.List<OutboxMessage> messages) {
        Objects.requireNonNull(connection, "connection");
        try {
            requireTransaction(connection);
            return insertAll(connection, messages);
        } catch (SQLException e) {
            throw Sql.unavailable("outbox append", e);
        }
    }

    private java.util.List<String> insertAll(Connection c, java.util.List<OutboxMessage> messages) throws SQLException {
        if (messages.size() > 1) {
            lockAll(c, messages.stream().map(OutboxMessage::orderingKey).toList());
        }
        java.util.List<String> ids = new java.util.ArrayList<>(messages.size());
        for (OutboxMessage m : messages) {
            ids.add(insert(c, m)); // its own lock again: advisory locks are reentrant, nothing waits
        }
        return java.util.List.copyOf(ids);
    }

    private static void requireTransaction(Connection connection) throws SQLException {
        if (connection.getAutoCommit()) {
            throw new IllegalStateException("the outbox appends inside the caller's transaction, and this connection"
                    + " is in auto-commit mode: the message would commit apart from the effect. Call"
                    + " setAutoCommit(false) and commit the effect and the append together");
        }
    }

    /**
     * Appends inside the caller's JDBC transaction, on a connection whose search path reaches {@code outbox_messages};
     * never commits or rolls back.
     *
     * @throws IllegalStateException when the connection is in auto-commit mode: the row would be committed on its own,
     *     apart from the effect
     */
    public String append(Connection connection, OutboxMessage message) {
        Objects.requireNonNull(connection, "connection");
        try {
            requireTransaction(connection);
            return insert(connection, message);
        } catch (SQLException e) {
            throw Sql.unavailable("outbox append", e);
        }
    }

    /**
     * A version 7 UUID (RFC 9562): 48 bits of Unix milliseconds, then 74 random bits. Unique like a random UUID, but
     * appended near the right edge of the id's index instead of anywhere in it.
     */
    static UUID timeOrderedUuid() {
        java.security.SecureRandom r = RANDOM;
        long msb = (System.currentTimeMillis() << 16) | 0x7000L | (r.nextLong() & 0x0FFFL);
        long lsb = (r.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(msb, lsb);
    }

    /** Whether this append notifies: no other append of this process did in the last {@link #NOTIFY_EVERY_NANOS}. */
    private boolean notifyNow() {
        long now = System.nanoTime();
        long last = lastNotify.get();
        return now - last >= NOTIFY_EVERY_NANOS && lastNotify.compareAndSet(last, now);
    }

    private String insert(Connection c, OutboxMessage message) throws SQLException {
        Objects.requireNonNull(message, "message");
        return insert(c, APPEND, message, timeOrderedUuid());
    }

    private String insert(Connection c, String sql, OutboxMessage message, UUID id) throws SQLException {
        TreeMap<String, String> headers = new TreeMap<>(message.headers());
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, id);
            ps.setString(2, message.destination());
            ps.setString(3, message.orderingKey());
            ps.setArray(4, c.createArrayOf("text", headers.keySet().toArray()));
            ps.setArray(5, c.createArrayOf("text", headers.values().toArray()));
            ps.setBytes(6, message.body());
            ps.setInt(7, LOCK_SPACE);
            ps.setString(8, message.orderingKey());
            ps.setBoolean(9, notifyNow());
            ps.setString(10, channel);
            ps.executeUpdate();
        }
        return id.toString();
    }
}
