package dev.idemkit.app.wiring;

import dev.idemkit.adapters.redis.RedisStores;
import dev.idemkit.app.consumers.AccountCredit;
import dev.idemkit.app.consumers.BusinessEffects;
import dev.idemkit.app.consumers.OrderPlaced;
import dev.idemkit.adapters.redis.RedisUnitOfWork;
import dev.idemkit.ports.service.MessageHandler;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;

/**
 * The effects kept in Redis: a balance in cents ({@code INCRBY}) and one reservation key per order,
 * staged in the inbox's unit of work so that they commit in the same script as the key (and nothing else:
 * the Redis binding runs them through {@code RedisInboxStore.stagedOnly()}, one round trip). Keys are
 * {@code <prefix>:app:balance:<account>} and {@code <prefix>:app:reservation:<order>}; on a Redis
 * Cluster the unit of work refuses them (they are not in the claim's slot): the app's Redis effects
 * assume a single server.
 */
public final class RedisEffects implements BusinessEffects<RedisUnitOfWork> {
    private final RedisStores redis;
    private final String prefix;

    public RedisEffects(RedisStores redis) {
        this.redis = redis;
        this.prefix = redis.settings().keyPrefix() + ":app:";
    }

    String balanceKey(String account) {
        return prefix + "balance:" + account;
    }

    String reservationKey(String order) {
        return prefix + "reservation:" + order;
    }

    static long cents(BigDecimal amount) {
        return amount.movePointRight(2).longValueExact();
    }

    @Override
    public MessageHandler<RedisUnitOfWork> reserveInventory() {
        return (message, work) -> {
            OrderPlaced order = OrderPlaced.parse(message.body());
            work.set(reservationKey(order.orderId()), new String(order.toJson(), StandardCharsets.UTF_8));
        };
    }

    @Override
    public MessageHandler<RedisUnitOfWork> creditAccount() {
        return (message, work) -> {
            AccountCredit credit = AccountCredit.parse(message.body());
            work.incrBy(balanceKey(credit.accountId()), cents(credit.amount()));
        };
    }

    @Override
    public void creditWithoutIdempotency(AccountCredit credit) {
        redis.atomically(w -> w.incrBy(balanceKey(credit.accountId()), cents(credit.amount())));
    }

    @Override
    public BigDecimal balance(String accountId) {
        return redis.get(balanceKey(accountId)).map(v -> BigDecimal.valueOf(Long.parseLong(v), 2))
                .orElse(BigDecimal.ZERO.setScale(2));
    }

    @Override
    public long reservations(String orderId) {
        return redis.get(reservationKey(orderId)).isPresent() ? 1 : 0;
    }

    @Override
    public String dedupEvidence() {
        return "Redis: the inbox key is written only if absent (checked and set, with the effect, by one Lua script,"
                + " atomic on the server; prefix " + redis.settings().keyPrefix() + "), not in this process's memory";
    }
}
