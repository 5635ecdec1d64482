package dev.idemkit.benchmarks;

import dev.idemkit.adapters.postgres.PostgresInboxStore;
import dev.idemkit.app.consumers.AccountCredit;
import dev.idemkit.domain.ConsumerName;
import dev.idemkit.domain.Message;
import dev.idemkit.domain.MessageId;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The {@code accounts.credit} effect for a whole batch: {@link PostgresInboxStore#runBatch} inserts the
 * keys of the batch in one statement and, in the same transaction, this credits the new ones with ONE
 * more statement: an upsert of one row per account from two arrays, inserted in account order (the
 * {@code ORDER BY} of the {@code INSERT ... SELECT}), so concurrent batches lock account rows in the same
 * order and cannot deadlock. A malformed body fails the whole batch, whose deliveries then go through
 * the per-message path one by one.
 */
final class PostgresCreditBatch implements BatchingHandler.BatchStep {
    static final String CREDIT = """
            INSERT INTO accounts (id, balance)
            SELECT c.id, c.amount FROM unnest(?::text[], ?::numeric[]) WITH ORDINALITY AS c(id, amount, n)
            ORDER BY c.n
            ON CONFLICT (id) DO UPDATE SET balance = accounts.balance + EXCLUDED.balance
            """;

    private final PostgresInboxStore inbox;
    private final ConsumerName consumer;

    PostgresCreditBatch(PostgresInboxStore inbox, String consumer) {
        this.inbox = inbox;
        this.consumer = ConsumerName.of(consumer);
    }

    @Override
    public List<Outcome> commit(List<Message> messages) {
        List<InboxDelivery> deliveries = new ArrayList<>(messages.size());
        Map<InboxKey, AccountCredit> credits = new HashMap<>();
        for (Message m : messages) {
            InboxKey key = new InboxKey(consumer, new MessageId(m.rawId()));
            deliveries.add(new InboxDelivery(key, m.fingerprint()));
            if (!credits.containsKey(key)) {
                credits.put(key, AccountCredit.parse(m.body()));
            }
        }
        return inbox.runBatch(deliveries, (work, fresh) -> {
            TreeMap<String, BigDecimal> perAccount = new TreeMap<>();
            for (InboxDelivery d : fresh) {
                AccountCredit c = credits.get(d.key());
                perAccount.merge(c.accountId(), c.amount(), BigDecimal::add);
            }
            Connection c = work.connection();
            try (PreparedStatement ps = c.prepareStatement(CREDIT)) {
                ps.setArray(1, c.createArrayOf("text", perAccount.keySet().toArray()));
                ps.setArray(2, c.createArrayOf("numeric", perAccount.values().toArray()));
                ps.executeUpdate();
            }
        });
    }
}
