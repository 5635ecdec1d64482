package dev.idemkit.adapters.postgres;

import static dev.idemkit.adapters.postgres.OutboxRows.COLUMNS;
import static dev.idemkit.adapters.postgres.OutboxRows.query;
import static dev.idemkit.adapters.postgres.OutboxRows.storable;
import static dev.idemkit.adapters.postgres.OutboxRows.uuid;

import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.ports.out.OutboxEntry;
import dev.idemkit.ports.out.ParkedOutbox;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The parked rows of {@code outbox_messages} and the operators' actions on them ({@link ParkedOutbox}): each action one
 * conditional {@code UPDATE} on a row that is parked and unsent, its approval recorded in the row, the relays woken
 * when it frees a key. Thread-safe.
 */
final class PostgresParkedOutbox implements ParkedOutbox {
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

    private final DataSource dataSource;
    private final String channel;

    PostgresParkedOutbox(DataSource dataSource, String channel) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.channel = Objects.requireNonNull(channel, "channel");
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
                .stream().map(OutboxRows.Stored::entry).toList();
    }

    @Override
    public Optional<OutboxEntry> find(String id) {
        Optional<UUID> uuid = uuid(id);
        if (uuid.isEmpty()) {
            return Optional.empty();
        }
        return Sql.inTransaction(dataSource, "outbox find", c -> query(c, "SELECT " + COLUMNS
                + " FROM outbox_messages WHERE id = ?", ps -> ps.setObject(1, uuid.get())))
                .stream().findFirst().map(OutboxRows.Stored::entry);
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
                    OutboxRows.notifyRelays(c, channel);
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
                    OutboxRows.notifyRelays(c, channel); // the key's next row may go out now
                }
                return done;
            }
        });
    }

    /** How a discarded row's record starts (its {@code redrive} column). */
    static final String DISCARDED = "discarded, never published, by ";
}
