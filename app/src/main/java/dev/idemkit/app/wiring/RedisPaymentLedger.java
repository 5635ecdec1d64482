package dev.idemkit.app.wiring;

import dev.idemkit.app.payments.Payment;
import dev.idemkit.app.payments.PaymentLedger;
import dev.idemkit.app.payments.PaymentRequest;
import dev.idemkit.adapters.redis.RedisStores;
import dev.idemkit.adapters.redis.RedisUnitOfWork;
import dev.idemkit.domain.httpkey.ClientId;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.BiConsumer;

/**
 * Charges in Redis: a hash per payment and a set of payment ids per account. Behind the Idempotency-Key flow a charge
 * is staged in the claim's {@link RedisUnitOfWork} ({@link #on}) and applied by the script that stores the response and
 * ends the claim, so a key charges exactly once; {@link #charge} on its own writes in one MULTI/EXEC. Keys are
 * {@code <prefix>:app:payment:<id>} and {@code <prefix>:app:account-payments:<account>}: like the app's other Redis
 * effects they assume a single server (on a cluster the unit of work refuses them).
 */
public final class RedisPaymentLedger implements PaymentLedger {
    /** A hash field write, wherever it goes. */
    @FunctionalInterface
    private interface HashWrite {
        void hset(String key, String field, String value);
    }

    private final RedisStores redis;
    private final String prefix;

    public RedisPaymentLedger(RedisStores redis) {
        this.redis = redis;
        this.prefix = redis.settings().keyPrefix() + ":app:";
    }

    @Override
    public Payment charge(ClientId client, PaymentRequest request) {
        Payment[] charged = new Payment[1];
        redis.atomically(w -> charged[0] = charge(client, request, w::hset, w::sadd));
        return charged[0];
    }

    /** This ledger with every charge staged in {@code work}: written only when the work is applied. */
    public PaymentLedger on(RedisUnitOfWork work) {
        return PaymentLedger.charging((client, request) -> charge(client, request, work::hset, work::sadd), this);
    }

    private Payment charge(ClientId client, PaymentRequest request, HashWrite hash, BiConsumer<String, String> set) {
        Payment p = new Payment("pay_" + UUID.randomUUID().toString().replace("-", ""), client, request, Instant.now());
        String payment = prefix + "payment:" + p.id();
        hash.hset(payment, "client_id", client.value());
        hash.hset(payment, "account_id", request.accountId());
        hash.hset(payment, "amount", request.amount().toPlainString());
        hash.hset(payment, "currency", request.currency());
        hash.hset(payment, "created_at", p.createdAt().toString());
        set.accept(prefix + "account-payments:" + request.accountId(), p.id());
        return p;
    }

    @Override
    public Optional<Payment> find(ClientId client, String paymentId) {
        if (!dev.idemkit.domain.KeyRules.isValid(paymentId)) {
            return Optional.empty();
        }
        Map<String, String> h = redis.hgetAll(prefix + "payment:" + paymentId);
        if (h.isEmpty() || !client.value().equals(h.get("client_id"))) {
            return Optional.empty();
        }
        return Optional.of(new Payment(paymentId, client, new PaymentRequest(new BigDecimal(h.get("amount")),
                h.get("currency"), h.get("account_id")), Instant.parse(h.get("created_at"))));
    }

    @Override
    public List<Payment> forAccount(ClientId client, String accountId, int limit) {
        List<Payment> out = new ArrayList<>();
        for (String id : redis.smembers(prefix + "account-payments:" + accountId)) {
            find(client, id).ifPresent(out::add);
        }
        out.sort(Comparator.comparing(Payment::createdAt).thenComparing(Payment::id));
        return out.size() > limit ? List.copyOf(out.subList(0, limit)) : List.copyOf(out);
    }
}
