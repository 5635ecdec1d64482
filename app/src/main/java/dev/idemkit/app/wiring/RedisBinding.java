package dev.idemkit.app.wiring;

import dev.idemkit.adapters.redis.RedisSettings;
import dev.idemkit.adapters.redis.RedisStores;
import dev.idemkit.adapters.redis.RedisUnitOfWork;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.consumers.BusinessEffects;
import dev.idemkit.app.payments.PaymentCharger;
import dev.idemkit.app.payments.PaymentLedger;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.ports.service.IdempotentRequestService;
import dev.idemkit.ports.out.Guarantee;
import dev.idemkit.ports.out.IdempotencyRecords;
import dev.idemkit.ports.out.InboxStore;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.function.UnaryOperator;

/** The Redis store: the inbox, Idempotency-Key records, balances, reservations and payments all in Redis. */
final class RedisBinding implements StoreBinding<RedisUnitOfWork> {
    private final RedisStores redis;
    private final RedisEffects effects;
    private final RedisPaymentLedger ledger;
    private final String description;

    static RedisBinding start(AppSettings s) {
        return new RedisBinding(s.store().redis(), s.store().inboxRetention());
    }

    private RedisBinding(AppSettings.RedisChoice choice, Duration inboxRetention) {
        // the adapter's own options (password, topology, database, lease, claim wait) as the app resolved them from
        // flags, environment or file; never the process environment behind the app's back
        Map<String, String> env = new HashMap<>(choice.adapterOptions());
        env.put("IDEMKIT_REDIS_URL", choice.url().toString());
        String keyPrefix = choice.prefix();
        RedisSettings settings = RedisSettings.fromEnvironment(env).withKeyPrefix(keyPrefix).withRetentionTtl(inboxRetention);
        if (settings.topology() == RedisSettings.Topology.CLUSTER) {
            // every write of the app's consumers and payments goes through a unit of work that a cluster confines to
            // the claim's hash slot, and the app's keys (balances, payments) are named per account, not per claim
            throw new dev.idemkit.app.config.ConfigException("redis.topology", "the app's Redis effects and payments"
                    + " keep their keys by account and payment, outside a claim's hash slot, so the app runs on a single"
                    + " Redis server (redis.topology=single); the adapters themselves support a cluster");
        }
        this.redis = RedisStores.connect(settings);
        if (!redis.ping()) {
            redis.close();
            throw new IllegalStateException("Redis at " + settings.addresses() + " does not answer PING");
        }
        this.effects = new RedisEffects(redis);
        this.ledger = new RedisPaymentLedger(redis);
        this.description = "Redis at " + settings.addresses() + " key prefix " + settings.keyPrefix();
    }

    /** No outbox on Redis: the example service emits no events there. */
    @Override
    public java.util.Optional<dev.idemkit.ports.out.OutboxStore> outbox() {
        return java.util.Optional.empty();
    }

    @Override
    public InboxStore<RedisUnitOfWork> inbox() {
        // every effect of the app's Redis consumers is staged in the unit of work (RedisEffects): one round trip
        return redis.inbox().stagedOnly();
    }

    @Override
    public BusinessEffects<RedisUnitOfWork> effects() {
        return effects;
    }

    @Override
    public IdempotencyRecords idempotencyRecords() {
        return redis.idempotencyRecords();
    }

    @Override
    public PaymentLedger ledger() {
        return ledger;
    }

    /**
     * The charge is staged in the claim's unit of work and applied by the script that stores the response and ends the
     * claim: key, charge and stored response in one atomic step on the claim's fence.
     */
    @Override
    public PaymentCharger charger(KeyPolicy policy, UnaryOperator<PaymentLedger> decorate) {
        return PaymentCharger.of(IdempotentRequestService.overStagedRecords(redis.idempotencyRecords(), policy),
                (RedisUnitOfWork work) -> decorate.apply(ledger.on(work)));
    }

    @Override
    public Guarantee guarantee() {
        return redis.inbox().guarantee();
    }

    @Override
    public String paymentsGuarantee() {
        return "charge, stored response and the claim's end in one script on the claim's fence: exactly once"
                + " (within Redis' durability)";
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public RetentionRun purgeExpired(Instant now, java.util.function.BooleanSupplier keepGoing) {
        return RetentionRun.nothingToDo(
                "Redis expires processed keys and Idempotency-Key records by TTL, on its own clock: nothing to purge");
    }

    @Override
    public String health() {
        return redis.ping() ? "UP" : "DOWN: no answer to PING";
    }

    @Override
    public void close() {
        redis.close();
    }
}
