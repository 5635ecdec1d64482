package dev.idemkit.adapters.postgres;

import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.out.OutboxEntry;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.out.OutboxRow;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;

/**
 * Rows of {@code outbox_messages} as the relay and the operators read them: the columns, the reading, the ids, the
 * error texts as they may be stored, and the wake-up a change that frees a key sends to the relays.
 */
final class OutboxRows {
    private OutboxRows() {}

    static final String COLUMNS = """
            seq, id, destination, ordering_key,
            ARRAY(SELECT h.key FROM jsonb_each_text(headers) h ORDER BY h.key) AS header_names,
            ARRAY(SELECT h.value FROM jsonb_each_text(headers) h ORDER BY h.key) AS header_values,
            body, appended_at, attempt, failed_at, failed_errors, next_attempt_at, sent_at, parked_at, park_reason,
            redrive
            """;
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

    /** Wakes the relays listening on {@code channel} (at this transaction's commit). */
    static void notifyRelays(Connection c, String channel) throws SQLException {
        try (PreparedStatement n = c.prepareStatement("SELECT pg_notify(?, '')")) {
            n.setString(1, channel);
            n.execute();
        }
    }

    static Optional<UUID> uuid(String id) {
        try {
            return Optional.of(UUID.fromString(Objects.requireNonNull(id, "id")));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    @FunctionalInterface
    interface Binder {
        void bind(PreparedStatement ps) throws SQLException;
    }

    static List<Stored> query(Connection c, String sql, Binder binder) throws SQLException {
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
    record Stored(OutboxRow row, Optional<Instant> nextAttemptAt, Optional<Instant> sentAt,
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

    static Stored read(ResultSet rs) throws SQLException {
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
