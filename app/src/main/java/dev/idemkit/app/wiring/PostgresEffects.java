package dev.idemkit.app.wiring;

import dev.idemkit.adapters.postgres.JpaUnitOfWork;
import dev.idemkit.app.consumers.AccountCredit;
import dev.idemkit.app.consumers.BusinessEffects;
import dev.idemkit.app.consumers.OrderPlaced;
import dev.idemkit.adapters.postgres.PostgresDatabase;
import dev.idemkit.adapters.postgres.PostgresOutbox;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.service.BatchHandler;
import dev.idemkit.ports.service.MessageHandler;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * The effects in PostgreSQL, as plain SQL on the inbox's own transaction. A new reservation also appends its
 * {@code inventory.reserved} event to the outbox in that transaction: reservation, inbox key and event commit together.
 */
public final class PostgresEffects implements BusinessEffects<JpaUnitOfWork> {
    private static final String CREDIT = """
            INSERT INTO accounts (id, balance) VALUES (?, ?)
            ON CONFLICT (id) DO UPDATE SET balance = accounts.balance + EXCLUDED.balance
            """;
    /** The batch credit, one statement per batch (accounts in order); the benchmarks replay it with pgbench. */
    public static final String CREDIT_MANY = """
            INSERT INTO accounts (id, balance)
            SELECT c.id, c.amount FROM unnest(?::text[], ?::numeric[]) WITH ORDINALITY AS c(id, amount, n)
            ORDER BY c.n
            ON CONFLICT (id) DO UPDATE SET balance = accounts.balance + EXCLUDED.balance
            """;
    private static final String RESERVE = """
            INSERT INTO inventory_reservations (order_id, customer_id, items, reserved_at)
            VALUES (?, ?, ?::jsonb, now())
            ON CONFLICT (order_id) DO NOTHING
            """;
    private static final String BALANCE = "SELECT balance FROM accounts WHERE id = ?";
    private static final String RESERVATIONS = "SELECT count(*) FROM inventory_reservations WHERE order_id = ?";
    private static final String INBOX_CONSTRAINT = """
            SELECT c.conname, pg_get_constraintdef(c.oid)
              FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
              JOIN pg_namespace n ON n.oid = t.relnamespace
             WHERE t.relname = 'processed_messages' AND n.nspname = ? AND c.contype IN ('p', 'u')
            """;

    private final PostgresDatabase db;
    private final PostgresOutbox outbox;

    public PostgresEffects(PostgresDatabase db, PostgresOutbox outbox) {
        this.db = db;
        this.outbox = outbox;
    }

    @Override
    public MessageHandler<JpaUnitOfWork> reserveInventory() {
        return (message, work) -> {
            OrderPlaced order = OrderPlaced.parse(message.body());
            try (PreparedStatement ps = work.connection().prepareStatement(RESERVE)) {
                ps.setString(1, order.orderId());
                ps.setString(2, order.customerId());
                ps.setString(3, new String(order.itemsJson(), java.nio.charset.StandardCharsets.UTF_8));
                if (ps.executeUpdate() == 1) { // another message for an order already reserved emits nothing
                    outbox.append(work, new OutboxMessage(OrderPlaced.RESERVED_EVENT, order.reservedOrderingKey(),
                            dev.idemkit.app.tracing.Tracing.withTraceOf(message, java.util.Map.of("order_id",
                                    order.orderId())), order.toJson()));
                }
            }
        };
    }

    /**
     * Reservations of a batch: each appends its event under its customer's outbox key, whose lock is held to the commit,
     * so the batch takes all its keys' locks first, in lock order ({@link PostgresOutbox#lockKeys}); two concurrent
     * batches with customers in other orders would otherwise deadlock (and fall back to one message at a time after the
     * deadlock timeout). A malformed body fails the batch, as one message would.
     */
    @Override
    public BatchHandler<JpaUnitOfWork> reserveInventories() {
        MessageHandler<JpaUnitOfWork> one = reserveInventory();
        return (fresh, work) -> {
            java.util.Set<String> keys = new java.util.TreeSet<>();
            for (dev.idemkit.domain.Message m : fresh) {
                keys.add(OrderPlaced.parse(m.body()).reservedOrderingKey());
            }
            outbox.lockKeys(work, keys);
            for (dev.idemkit.domain.Message m : fresh) {
                one.handle(m, work);
            }
        };
    }

    @Override
    public MessageHandler<JpaUnitOfWork> creditAccount() {
        return (message, work) -> credit(work.connection(), AccountCredit.parse(message.body()));
    }

    /**
     * A batch of credits in ONE statement: summed per account, upserted in account order (the {@code ORDER BY} of the
     * {@code INSERT ... SELECT}), so concurrent batches lock account rows in the same order and cannot deadlock. A
     * malformed body fails the batch, whose deliveries then go through the single-message path one by one.
     */
    @Override
    public BatchHandler<JpaUnitOfWork> creditAccounts() {
        return (fresh, work) -> {
            java.util.TreeMap<String, BigDecimal> perAccount = new java.util.TreeMap<>();
            for (dev.idemkit.domain.Message m : fresh) {
                AccountCredit credit = AccountCredit.parse(m.body());
                perAccount.merge(credit.accountId(), credit.amount(), BigDecimal::add);
            }
            Connection c = work.connection();
            try (PreparedStatement ps = c.prepareStatement(CREDIT_MANY)) {
                ps.setArray(1, c.createArrayOf("text", perAccount.keySet().toArray()));
                ps.setArray(2, c.createArrayOf("numeric", perAccount.values().toArray()));
                ps.executeUpdate();
            }
        };
    }

    @Override
    public void creditWithoutIdempotency(AccountCredit credit) {
        db.inTransaction(work -> {
            credit(work.connection(), credit);
            return null;
        });
    }

    private static void credit(Connection c, AccountCredit credit) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(CREDIT)) {
            ps.setString(1, credit.accountId());
            ps.setBigDecimal(2, credit.amount());
            ps.executeUpdate();
        }
    }

    @Override
    public BigDecimal balance(String accountId) {
        return db.inTransaction(work -> {
            try (PreparedStatement ps = work.connection().prepareStatement(BALANCE)) {
                ps.setString(1, accountId);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? rs.getBigDecimal(1) : BigDecimal.ZERO;
                }
            }
        });
    }

    @Override
    public long reservations(String orderId) {
        return db.inTransaction(work -> {
            try (PreparedStatement ps = work.connection().prepareStatement(RESERVATIONS)) {
                ps.setString(1, orderId);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getLong(1);
                }
            }
        });
    }

    @Override
    public String dedupEvidence() {
        return db.inTransaction(work -> {
            try (PreparedStatement ps = work.connection().prepareStatement(INBOX_CONSTRAINT)) {
                ps.setString(1, db.schema());
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? "PostgreSQL constraint " + rs.getString(1) + " " + rs.getString(2)
                            + " on " + db.schema() + ".processed_messages" : "NO unique constraint on processed_messages";
                }
            }
        });
    }
}
