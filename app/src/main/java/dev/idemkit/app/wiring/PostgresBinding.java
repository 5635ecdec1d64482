package dev.idemkit.app.wiring;

import dev.idemkit.app.tracing.Tracing;
import dev.idemkit.adapters.postgres.JpaUnitOfWork;
import dev.idemkit.adapters.postgres.PostgresDatabase;
import dev.idemkit.adapters.postgres.PostgresIdempotencyRecords;
import dev.idemkit.adapters.postgres.PostgresInboxStore;
import dev.idemkit.adapters.postgres.PostgresOutbox;
import dev.idemkit.adapters.postgres.PostgresOutboxStore;
import dev.idemkit.app.payments.EmittingLedger;
import dev.idemkit.app.payments.Payment;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.out.OutboxStore;
import java.util.Map;
import java.util.Optional;
import dev.idemkit.adapters.postgres.PostgresRetention;
import dev.idemkit.adapters.postgres.PostgresSettings;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.consumers.BusinessEffects;
import dev.idemkit.app.payments.JdbcPaymentLedger;
import dev.idemkit.app.payments.PaymentCharger;
import dev.idemkit.app.payments.PaymentLedger;
import dev.idemkit.adapters.postgres.PostgresIdempotencyClaims;
import dev.idemkit.ports.service.IdempotentRequestService;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.ports.out.Guarantee;
import dev.idemkit.ports.out.IdempotencyRecords;
import dev.idemkit.ports.out.InboxStore;
import java.sql.Connection;
import java.time.Instant;
import java.util.function.UnaryOperator;

/**
 * The PostgreSQL store: idemkit's tables and the app's (accounts, inventory_reservations, payments) in one schema, and the
 * outbox: {@code payments.created} and {@code inventory.reserved} are appended in their effects' transactions.
 */
final class PostgresBinding implements StoreBinding<JpaUnitOfWork> {
    static final String APP_MIGRATIONS = "classpath:db/migration/app";

    private final PostgresDatabase db;
    private final PostgresInboxStore inbox;
    private final PostgresIdempotencyRecords records;
    private final PostgresEffects effects;
    private final JdbcPaymentLedger ledger;
    private final PostgresRetention retention;
    private final PostgresOutbox outbox;
    private final PostgresOutboxStore outboxStore;
    private final PostgresRetention.Policy retentionPolicy;
    private final String description;

    static PostgresBinding start(AppSettings s, EmbeddedEngines engines) {
        String url = s.store().postgres().url().orElseGet(engines::postgresJdbcUrl);
        String origin = s.store().postgres().url().isPresent() ? "at" : "(embedded, started in this process) at";
        return new PostgresBinding(new PostgresSettings(url, s.store().postgres().user(), s.store().postgres().password(), s.store().postgres().schema(), s.store().postgres().poolSize()),
                retentionPolicy(s.store()), origin);
    }

    /** The inbox's dedup window and how retention deletes, from the settings. */
    static PostgresRetention.Policy retentionPolicy(AppSettings.StoreSettings store) {
        AppSettings.RetentionSettings r = store.retention();
        return new PostgresRetention.Policy(store.inboxRetention(), r.sentOutbox(), r.batchSize(), r.pause(),
                r.dutyCycle());
    }

    private PostgresBinding(PostgresSettings settings, PostgresRetention.Policy retentionPolicy, String origin) {
        this.db = PostgresDatabase.builder(settings).userMigrations(APP_MIGRATIONS)
                .schemaCheck(PostgresDatabase.SchemaCheck.NONE).start();
        this.inbox = new PostgresInboxStore(db);
        this.records = new PostgresIdempotencyRecords(db);
        this.outbox = new PostgresOutbox(db);
        this.outboxStore = new PostgresOutboxStore(db);
        this.effects = new PostgresEffects(db, outbox);
        this.ledger = new JdbcPaymentLedger(db.dataSource());
        this.retention = new PostgresRetention(db);
        this.retentionPolicy = retentionPolicy;
        this.description = "PostgreSQL " + origin + " " + settings.url() + " schema " + settings.schema();
    }

    @Override
    public InboxStore<JpaUnitOfWork> inbox() {
        return inbox;
    }

    @Override
    public BusinessEffects<JpaUnitOfWork> effects() {
        return effects;
    }

    @Override
    public IdempotencyRecords idempotencyRecords() {
        return records;
    }

    @Override
    public PaymentLedger ledger() {
        return ledger;
    }

    /** The charge runs in the claim's transaction: key, charge, stored response and {@code payments.created} commit together. */
    @Override
    public PaymentCharger charger(KeyPolicy policy, UnaryOperator<PaymentLedger> decorate) {
        return PaymentCharger.of(new IdempotentRequestService<>(new PostgresIdempotencyClaims(db), policy),
                (JpaUnitOfWork work) -> decorate.apply(EmittingLedger.of(ledger.on(work.connection()),
                        p -> outbox.append(work, new OutboxMessage(Payment.CREATED_EVENT, Payment.orderingKey(p),
                                Tracing.withCurrentTrace(Map.of("payment_id", p.id())), p.toJson())))));
    }

    /** In the app's schema: a redrive cut short by a crash is still on record after the restart. */
    @Override
    public dev.idemkit.ports.out.RedriveAudit redriveAudit() {
        return new dev.idemkit.app.http.PostgresRedriveAudit(db.dataSource());
    }

    @Override
    public Optional<OutboxStore> outbox() {
        return Optional.of(outboxStore);
    }

    @Override
    public Guarantee guarantee() {
        return inbox.guarantee();
    }

    @Override
    public String paymentsGuarantee() {
        return "the charge and the stored response commit in the claim's transaction: exactly once";
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public RetentionRun purgeExpired(Instant now, java.util.function.BooleanSupplier keepGoing) {
        PostgresRetention.Report r = retention.purge(retentionPolicy, keepGoing);
        PostgresRetention.Oldest oldest = retention.oldest();
        return new RetentionRun(java.util.Map.of("processed_messages", r.processedMessages(), "idempotency_records",
                r.idempotencyRecords(), "outbox_messages", r.sentOutbox()),
                oldest.processedMessage().map(t -> oldest.inboxAge()), r.caughtUp(), r + " (inbox window "
                + retentionPolicy.inbox() + ", sent outbox kept " + retentionPolicy.sentOutbox() + ")");
    }

    @Override
    public String health() {
        try (Connection c = db.dataSource().getConnection()) {
            return c.isValid(2) ? "UP" : "DOWN: connection not valid";
        } catch (java.sql.SQLException e) {
            return "DOWN: " + e.getMessage();
        }
    }

    @Override
    public void close() {
        outboxStore.close();
        db.close();
    }
}
