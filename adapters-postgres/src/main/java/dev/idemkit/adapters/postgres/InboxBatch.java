package dev.idemkit.adapters.postgres;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.Inbox;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.StoreUnavailableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** One batch of inbox deliveries: its multi-row insert, the read of the keys that conflicted, the outcomes. */
final class InboxBatch {
    static final String INSERT_KEYS = """
            INSERT INTO processed_messages (consumer, message_id, fingerprint)
            SELECT * FROM unnest(?::text[], ?::text[], ?::text[])
            ON CONFLICT DO NOTHING
            RETURNING consumer, message_id
            """;
    /**
     * The recorded fingerprints of the keys that conflicted, one primary-key lookup per key. The {@code LIMIT 1} keeps
     * the lookup a subquery run per key (a plain join is flattened, and the plan PostgreSQL cached for the prepared
     * statement on a new table without statistics was then a hash join over a sequential scan of the whole inbox,
     * once per batch, until the table was analyzed: HotPathPlansIT).
     */
    static final String SELECT_FINGERPRINTS = """
            SELECT k.consumer, k.message_id, p.fingerprint
            FROM unnest(?::text[], ?::text[]) AS k(consumer, message_id)
            CROSS JOIN LATERAL (SELECT fingerprint FROM processed_messages
                                WHERE consumer = k.consumer AND message_id = k.message_id LIMIT 1) p
            """;
    private static final Comparator<InboxKey> KEY_ORDER = Comparator
            .comparing((InboxKey k) -> k.consumer().value()).thenComparing(k -> k.messageId().value());

    private final List<InboxDelivery> deliveries;
    private final List<InboxDelivery> firsts;
    private final Set<InboxKey> inserted = new HashSet<>();
    private final Map<InboxKey, Fingerprint> stored = new HashMap<>();

    InboxBatch(List<InboxDelivery> deliveries) {
        this.deliveries = List.copyOf(deliveries);
        Map<InboxKey, InboxDelivery> first = new LinkedHashMap<>();
        for (InboxDelivery d : this.deliveries) {
            first.putIfAbsent(d.key(), d);
        }
        List<InboxDelivery> sorted = new ArrayList<>(first.values());
        sorted.sort(Comparator.comparing(InboxDelivery::key, KEY_ORDER));
        this.firsts = sorted;
    }

    /** The effect for the deliveries whose keys this batch inserted. */
    @FunctionalInterface
    interface OnFresh {
        void run(List<InboxDelivery> fresh);
    }

    /** The batch's statements on {@code c} and {@code onFresh} with the new deliveries, if any: the outcomes. */
    List<Outcome> run(Connection c, OnFresh onFresh) throws SQLException {
        insert(c);
        readStored(c);
        List<InboxDelivery> fresh = fresh();
        if (!fresh.isEmpty()) {
            onFresh.run(fresh);
        }
        return outcomes();
    }

    void insert(Connection c) throws SQLException {
        int n = firsts.size();
        String[] consumers = new String[n];
        String[] ids = new String[n];
        String[] fps = new String[n];
        for (int i = 0; i < n; i++) {
            consumers[i] = firsts.get(i).key().consumer().value();
            ids[i] = firsts.get(i).key().messageId().value();
            fps[i] = firsts.get(i).fingerprint().hex();
        }
        try (PreparedStatement ps = c.prepareStatement(INSERT_KEYS)) {
            ps.setArray(1, c.createArrayOf("text", consumers));
            ps.setArray(2, c.createArrayOf("text", ids));
            ps.setArray(3, c.createArrayOf("text", fps));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    inserted.add(InboxKey.of(rs.getString(1), rs.getString(2)));
                }
            }
        }
    }

    void readStored(Connection c) throws SQLException {
        List<InboxKey> conflicting = firsts.stream().map(InboxDelivery::key).filter(k -> !inserted.contains(k)).toList();
        if (conflicting.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement(SELECT_FINGERPRINTS)) {
            ps.setArray(1, c.createArrayOf("text", conflicting.stream().map(k -> k.consumer().value()).toArray()));
            ps.setArray(2, c.createArrayOf("text", conflicting.stream().map(k -> k.messageId().value()).toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    stored.put(InboxKey.of(rs.getString(1), rs.getString(2)), new Fingerprint(rs.getString(3)));
                }
            }
        }
        if (stored.size() != conflicting.size()) {
            throw new StoreUnavailableException("inbox keys conflicted yet vanished (purged concurrently); retry the batch", null);
        }
    }

    /** The new deliveries, in key order. */
    List<InboxDelivery> fresh() {
        return firsts.stream().filter(d -> inserted.contains(d.key())).toList();
    }

    List<Outcome> outcomes() {
        Map<InboxKey, Fingerprint> recorded = new HashMap<>(stored);
        List<Outcome> out = new ArrayList<>(deliveries.size());
        for (InboxDelivery d : deliveries) {
            Optional<Fingerprint> before = Optional.ofNullable(recorded.get(d.key()));
            out.add(Inbox.decide(before, d.fingerprint()));
            recorded.putIfAbsent(d.key(), d.fingerprint());
        }
        return out;
    }
}
