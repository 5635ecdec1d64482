package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.JoinedIdempotencyClaims;
import dev.idemkit.adapters.postgres.JoinedUnitOfWork;
import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.IdempotencyClaims;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The Idempotency-Key claim in a Spring transaction of its own per attempt, which the request's handler joins: a
 * {@code @Transactional} controller or service method (propagation REQUIRED) writes in the claim's transaction, so the
 * key, the handler's writes and the stored response commit together. A 5xx, an attempt that gave up waiting, or a
 * handler that left the transaction rollback-only with a 5xx rolls it back quietly (no {@code
 * UnexpectedRollbackException}); a 2xx from a handler whose transaction was marked rollback-only fails at the commit,
 * and nothing, key included, is kept.
 */
final class SpringIdempotencyClaims implements IdempotencyClaims<JoinedUnitOfWork> {
    private final JoinedIdempotencyClaims claims;
    private final TransactionTemplate transactions;

    SpringIdempotencyClaims(JoinedIdempotencyClaims claims, TransactionTemplate transactions) {
        this.claims = Objects.requireNonNull(claims, "claims");
        this.transactions = Objects.requireNonNull(transactions, "transactions");
    }

    @Override
    public Attempt attempt(ScopedKey key, Fingerprint fingerprint, KeyPolicy policy, Duration wait,
            Effect<? super JoinedUnitOfWork, StoredResponse> effect) {
        return transactions.execute(status -> {
            Attempt attempt = claims.attempt(key, fingerprint, policy, wait, effect);
            if (attempt instanceof Attempt.Busy || attempt instanceof Attempt.Ran ran && ran.response().isServerError()) {
                status.setRollbackOnly();
            }
            return attempt;
        });
    }

    @Override
    public StoredResponse runWithoutKey(Effect<? super JoinedUnitOfWork, StoredResponse> effect) {
        return transactions.execute(status -> {
            StoredResponse response = claims.runWithoutKey(effect);
            if (response.isServerError()) {
                status.setRollbackOnly();
            }
            return response;
        });
    }

    @Override
    public Optional<KeyRecord> find(ScopedKey key) {
        return transactions.execute(status -> claims.find(key));
    }
}
