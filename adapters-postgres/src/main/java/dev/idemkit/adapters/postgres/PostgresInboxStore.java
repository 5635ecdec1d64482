package dev.idemkit.adapters.postgres;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.Inbox;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.BatchEffect;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.Guarantee;
import dev.idemkit.ports.out.Guarded;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.ports.out.LogPosition;
import dev.idemkit.ports.out.LogPositions;
import dev.idemkit.ports.out.StoreUnavailableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The inbox on PostgreSQL, table {@code processed_messages} keyed by (consumer, message_id).
 *
 * <p>Atomic step: {@code INSERT INTO processed_messages ... ON CONFLICT DO NOTHING} in the same
 * transaction as the effect. One row inserted: the effect runs through the same {@link JpaUnitOfWork}
 * and both commit together. Zero rows: the primary key already holds the key (a concurrent insert of
 * the same key waits for the first transaction and then conflicts), so the stored fingerprint is read
 * in the same statement ({@link #INSERT_OR_READ_KEY}; in a new transaction when a concurrent transaction
 * committed the row after this statement's snapshot) and {@code Inbox.decide} tells a duplicate from a
 * reused id. An effect that
 * throws rolls the key back too. Never a read before the write. Thread-safe.
 */
public final class PostgresInboxStore implements InboxStore<JpaUnitOfWork> {
    private static final Logger LOG = LoggerFactory.getLogger(PostgresInboxStore.class);
    private static final int KEY_VANISHED_RETRIES = 3;

    /** The plain insert-if-absent: what the JDBC baseline of the benchmark runs. */
    static final String INSERT_KEY = """
            INSERT INTO processed_messages (consumer, message_id, fingerprint)
            VALUES (?, ?, ?)
            ON CONFLICT DO NOTHING
            """;
    /**
     * The key inserted if absent and, when it was not, the recorded fingerprint read in the same statement: one
     * round trip for a duplicate instead of two. A NULL row: inserted. A fingerprint: already there. No row: the
     * conflicting row is not visible to this statement's snapshot (committed by a concurrent transaction that the
     * insert waited for) or was just purged; the delivery then runs again in a new transaction, which sees it.
     */
    static final String INSERT_OR_READ_KEY = """
            WITH inserted AS (
                INSERT INTO processed_messages (consumer, message_id, fingerprint)
                VALUES (?, ?, ?)
                ON CONFLICT DO NOTHING
                RETURNING 1
            )
            SELECT NULL FROM inserted
            UNION ALL
            SELECT fingerprint FROM processed_messages
            WHERE consumer = ? AND message_id = ? AND NOT EXISTS (SELECT 1 FROM inserted)
            """;
    static final String SELECT_FINGERPRINT = """
            SELECT fingerprint FROM processed_messages WHERE consumer = ? AND message_id = ?
            """;

    /**
     * Within one log a position moves only forward: a late write of an older position (a consumer that lost its
     * partition) changes nothing. A position in another log (the topic was created again) replaces the row.
     */
    static final String UPSERT_POSITION = """
            INSERT INTO consumer_positions (consumer_group, topic, partition_id, next_offset, log_id)
            VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (consumer_group, topic, partition_id) DO UPDATE
            SET next_offset = EXCLUDED.next_offset, log_id = EXCLUDED.log_id, updated_at = now()
            WHERE consumer_positions.next_offset < EXCLUDED.next_offset
               OR consumer_positions.log_id <> EXCLUDED.log_id
            """;
    static final String SELECT_POSITION = """
            SELECT next_offset, log_id FROM consumer_positions
            WHERE consumer_group = ? AND topic = ? AND partition_id = ?
            """;

    private final PostgresDatabase db;

    public PostgresInboxStore(PostgresDatabase db) {
        this.db = Objects.requireNonNull(db, "db");
    }

    @Override
    public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint, Effect<? super JpaUnitOfWork, R> effect) {
        return runOnce(key, fingerprint, List.of(), effect);
    }

    /** Also writes {@code positions} in the key's transaction when the outcome is acknowledged (not rejected). */
    @Override
    public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint, List<LogPosition> positions,
            Effect<? super JpaUnitOfWork, R> effect) {
        Objects.requireNonNull(positions, "positions");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(effect, "effect");
        for (int attempt = 1; attempt <= KEY_VANISHED_RETRIES; attempt++) {
            Optional<Guarded<R>> result = Transactions.run(db, "inbox insert", unit -> {
                KeyFound found = insertOrRead(unit.rawConnection(), key, fingerprint);
                if (found instanceof KeyFound.Inserted) {
                    Guarded<R> ran = Guarded.processed(Transactions.effect(effect, unit));
                    writePositions(unit.rawConnection(), positions);
                    return Optional.of(ran);
                }
                if (found instanceof KeyFound.Recorded recorded) {
                    Guarded<R> decided = Guarded.of(Inbox.decide(Optional.of(recorded.fingerprint()), fingerprint));
                    if (!(decided.outcome() instanceof Outcome.Rejected)) {
                        writePositions(unit.rawConnection(), positions);
                    }
                    return Optional.of(decided);
                }
                return Optional.<Guarded<R>>empty(); // not visible to this statement: a new transaction decides
            });
            if (result.isPresent()) {
                log(key, result.get().outcome());
                return result.get();
            }
        }
        throw new StoreUnavailableException("inbox key " + key + " kept conflicting yet vanishing (purged concurrently)", null);
    }

    /**
     * Many deliveries in ONE transaction: one multi-row insert of their keys, then {@code effect} once
     * with the deliveries that were new (first occurrence of each key, ordered by key so that
     * concurrent batches lock in the same order). The effect throwing rolls back the whole batch.
     *
     * @return one outcome per delivery, in input order
     */
    @Override
    public List<Outcome> runBatch(List<InboxDelivery> deliveries, BatchEffect<? super JpaUnitOfWork> effect) {
        return runBatch(deliveries, List.of(), effect);
    }

    /** Also writes {@code positions} in the batch's transaction when no outcome is rejected. */
    @Override
    public List<Outcome> runBatch(List<InboxDelivery> deliveries, List<LogPosition> positions,
            BatchEffect<? super JpaUnitOfWork> effect) {
        Objects.requireNonNull(effect, "effect");
        Objects.requireNonNull(positions, "positions");
        InboxBatch batch = new InboxBatch(deliveries);
        if (deliveries.isEmpty()) {
            return List.of();
        }
        List<Outcome> outcomes = Transactions.run(db, "inbox batch insert", unit -> {
            List<Outcome> decided = batch.run(unit.rawConnection(), fresh -> Transactions.effect(work -> {
                effect.run(work, fresh);
                return null;
            }, unit));
            if (decided.stream().noneMatch(o -> o instanceof Outcome.Rejected)) {
                writePositions(unit.rawConnection(), positions);
            }
            return decided;
        });
        LOG.debug("inbox batch of {}: {} new", deliveries.size(), outcomes.stream().filter(Outcome::effectRan).count());
        return outcomes;
    }

    /** One transaction per batch: the keys, the effects and the commit, or nothing. */
    @Override
    public boolean batchesAtomically() {
        return true;
    }

    /** Positions are written in the inbox's own transactions, into {@code consumer_positions}. */
    @Override
    public boolean keepsPositions() {
        return true;
    }

    @Override
    public LogPositions positions() {
        return (group, topic, partition) -> Sql.inTransaction(db.dataSource(), "position read", c -> {
            try (PreparedStatement ps = c.prepareStatement(SELECT_POSITION)) {
                ps.setString(1, group);
                ps.setString(2, topic);
                ps.setInt(3, partition);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(new LogPosition(group, topic, partition, rs.getLong(1),
                            rs.getString(2))) : Optional.<LogPosition>empty();
                }
            }
        });
    }

    /** One upsert per partition (batched), in the caller's transaction; positions in a fixed order (lock order). */
    static void writePositions(Connection c, List<LogPosition> positions) throws SQLException {
        if (positions.isEmpty()) {
            return;
        }
        List<LogPosition> sorted = new java.util.ArrayList<>(positions);
        sorted.sort(java.util.Comparator.comparing(LogPosition::group).thenComparing(LogPosition::topic)
                .thenComparingInt(LogPosition::partition));
        try (PreparedStatement ps = c.prepareStatement(UPSERT_POSITION)) {
            for (LogPosition p : sorted) {
                ps.setString(1, p.group());
                ps.setString(2, p.topic());
                ps.setInt(3, p.partition());
                ps.setLong(4, p.next());
                ps.setString(5, p.logId());
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    @Override
    public Optional<Fingerprint> recorded(InboxKey key) {
        Objects.requireNonNull(key, "key");
        return Sql.inTransaction(db.dataSource(), "inbox read", c -> fingerprint(c, key));
    }

    @Override
    public Guarantee guarantee() {
        return Guarantee.EXACTLY_ONCE_EFFECT;
    }

    /** What {@link #INSERT_OR_READ_KEY} found. */
    sealed interface KeyFound {
        /** The key was new: this transaction inserted it. */
        record Inserted() implements KeyFound {}

        /** The key was there, recorded with this fingerprint. */
        record Recorded(Fingerprint fingerprint) implements KeyFound {}

        /**
         * The key conflicted but its row is not visible to this statement (a concurrent transaction committed it after
         * the statement's snapshot, or retention purged it).
         */
        record NotVisible() implements KeyFound {}
    }

    static KeyFound insertOrRead(Connection c, InboxKey key, Fingerprint fingerprint) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(INSERT_OR_READ_KEY)) {
            ps.setString(1, key.consumer().value());
            ps.setString(2, key.messageId().value());
            ps.setString(3, fingerprint.hex());
            ps.setString(4, key.consumer().value());
            ps.setString(5, key.messageId().value());
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return new KeyFound.NotVisible();
                }
                String recorded = rs.getString(1);
                return recorded == null ? new KeyFound.Inserted() : new KeyFound.Recorded(new Fingerprint(recorded));
            }
        }
    }

    static Optional<Fingerprint> fingerprint(Connection c, InboxKey key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(SELECT_FINGERPRINT)) {
            ps.setString(1, key.consumer().value());
            ps.setString(2, key.messageId().value());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(new Fingerprint(rs.getString(1))) : Optional.empty();
            }
        }
    }

    static void log(InboxKey key, Outcome outcome) {
        if (outcome instanceof Outcome.Rejected r) {
            LOG.warn("inbox consumer={} message_id={} decision=rejected reason=\"{}\"", key.consumer(), key.messageId(),
                    r.reason());
        } else {
            LOG.debug("inbox consumer={} message_id={} decision={}", key.consumer(), key.messageId(), outcome);
        }
    }

}
