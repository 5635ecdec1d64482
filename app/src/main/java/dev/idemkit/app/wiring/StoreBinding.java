package dev.idemkit.app.wiring;

import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.consumers.BusinessEffects;
import dev.idemkit.app.payments.PaymentCharger;
import dev.idemkit.app.payments.PaymentLedger;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.ports.out.Guarantee;
import dev.idemkit.ports.out.IdempotencyRecords;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.ports.out.OutboxStore;
import dev.idemkit.ports.out.UnitOfWork;
import java.time.Instant;
import java.util.Optional;
import java.util.function.UnaryOperator;

/** One store technology, wired: the inbox, the effects that share its unit of work, the Idempotency-Key records and the payments ledger. */
public interface StoreBinding<U extends UnitOfWork> extends AutoCloseable {

    /** The binding the settings name: {@link PostgresBinding} (embedded when no URL is set) or {@link RedisBinding}. */
    static StoreBinding<?> start(AppSettings settings, EmbeddedEngines engines) {
        return settings.store().kind() == AppSettings.StoreKind.REDIS ? RedisBinding.start(settings)
                : PostgresBinding.start(settings, engines);
    }

    InboxStore<U> inbox();

    /** Where the dead-letter console records its redrives: this process's memory unless the store keeps them. */
    default dev.idemkit.ports.out.RedriveAudit redriveAudit() {
        return dev.idemkit.ports.out.RedriveAudit.inMemory(1000);
    }

    BusinessEffects<U> effects();

    IdempotencyRecords idempotencyRecords();

    PaymentLedger ledger();

    /** Charges at most once per (client, key), with the given Idempotency-Key policy. */
    default PaymentCharger charger(KeyPolicy policy) {
        return charger(policy, UnaryOperator.identity());
    }

    /**
     * The same, each charge going through {@code decorate}d ledger: the decorator sees every charge the flow makes,
     * inside the flow (after the key is claimed; on PostgreSQL in the claim's transaction) — for metrics, tracing, or
     * an exercise's slow charges.
     */
    PaymentCharger charger(KeyPolicy policy, UnaryOperator<PaymentLedger> decorate);

    /**
     * The outbox the app's effects append their events to ({@code payments.created}, {@code inventory.reserved}), for
     * the relay; empty where the store has none (Redis: the example service emits no events there).
     */
    Optional<OutboxStore> outbox();

    /** The guarantee for the app's own effects, which live in this store. */
    Guarantee guarantee();

    /** What {@code POST /payments} guarantees on this store: whether the charge and its stored response commit together. */
    String paymentsGuarantee();

    /** "PostgreSQL jdbc:postgresql://... schema public" — never a password. */
    String describe();

    /**
     * Deletes what is past retention at {@code now} (keys, Idempotency-Key records, sent outbox rows) in bounded batches
     * until caught up or {@code keepGoing} answers false (asked between batches).
     */
    RetentionRun purgeExpired(Instant now, java.util.function.BooleanSupplier keepGoing);

    /** "UP" or a reason. */
    String health();

    @Override
    void close();
}
