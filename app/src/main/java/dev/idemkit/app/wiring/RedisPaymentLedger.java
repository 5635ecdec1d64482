package dev.idemkit.app.wiring;

import dev.idemkit.app.payments.Payment;
import dev.idemkit.app.payments.PaymentLedger;
import dev.idemkit.app.payments.PaymentRequest;
import dev.idemkit.adapters.redis.RedisStores;
import dev.idemkit.domain.httpkey.ClientId;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/** Charges in Redis: a hash per payment and a set of payment ids per account, written in one MULTI/EXEC. */
public final class RedisPaymentLedger implements PaymentLedger {
    private final RedisStores redis;
    private final String prefix;

    public RedisPaymentLedger(RedisStores redis) {
        this.redis = redis;
        this.prefix = redis.settings().keyPrefix() + ":app:";
    }

    @Override
    public Payment charge(ClientId client, PaymentRequest request) {
        Payment p = new Payment("pay_" + UUID.randomUUID().toString().replace("-", ""), client, request, Instant.now());
        redis.atomically(w -> w.hset(prefix + "payment:" + p.id(), "client_id", client.value())
                .hset(prefix + "payment:" + p.id(), "account_id", request.accountId())
                .hset(prefix + "payment:" + p.id(), "amount", request.amount().toPlainString())
                .hset(prefix + "payment:" + p.id(), "currency", request.currency())
                .hset(prefix + "payment:" + p.id(), "created_at", p.createdAt().toString())
                .sadd(prefix + "account-payments:" + request.accountId(), p.id()));
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
