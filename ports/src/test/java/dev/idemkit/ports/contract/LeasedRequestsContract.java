package dev.idemkit.ports.contract;

import dev.idemkit.ports.out.IdempotencyClaims;
import dev.idemkit.ports.out.IdempotencyRecords;
import dev.idemkit.ports.out.NoTransaction;
import dev.idemkit.ports.service.LeasedClaims;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link IdempotentRequestsContract} for a store without a shared transaction: leased claims over its
 * {@link IdempotencyRecords}, the effect a counter in this JVM (as an effect outside the store is).
 */
public abstract class LeasedRequestsContract extends IdempotentRequestsContract<NoTransaction> {
    private final Map<String, AtomicLong> effects = new ConcurrentHashMap<>();
    private IdempotencyClaims<NoTransaction> claims;

    /** The records under test. */
    protected abstract IdempotencyRecords records();

    @Override
    protected final IdempotencyClaims<NoTransaction> claims() {
        if (claims == null) {
            claims = LeasedClaims.over(records());
        }
        return claims;
    }

    @Override
    protected final void recordEffect(NoTransaction work, String tag) {
        effects.computeIfAbsent(tag, t -> new AtomicLong()).incrementAndGet();
    }

    @Override
    protected final long keptEffects(String tag) {
        AtomicLong n = effects.get(tag);
        return n == null ? 0 : n.get();
    }

    @Override
    protected final boolean effectSharesTheClaimsTransaction() {
        return false;
    }
}
