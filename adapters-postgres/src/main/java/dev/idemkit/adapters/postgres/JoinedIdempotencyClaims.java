package dev.idemkit.adapters.postgres;

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

/**
 * The Idempotency-Key flow's atomic step in a transaction the CALLER owns, one transaction per attempt: the same
 * claim as {@link PostgresIdempotencyClaims} ({@code INSERT ... ON CONFLICT (client_id, idem_key) DO UPDATE ...
 * WHERE expires_at <= now}) held uncommitted under a savepoint while the request's handler runs in the same
 * transaction, then the stored response, so that the handler's writes, the key and the response commit together with
 * the caller's commit. A 5xx, an exception or a lock wait past the deadline rolls back to the savepoint (the caller
 * then commits nothing of it); {@code lock_timeout} is set for the claim only and put back for the rest of the
 * caller's transaction. The caller opens a fresh transaction for every {@link #attempt} (the flow may call it again
 * after waiting for another request): an attempt that found another request's record must not be retried inside the
 * same transaction at REPEATABLE READ. Thread-safe as far as its {@link CallerTransaction} is.
 */
public final class JoinedIdempotencyClaims implements IdempotencyClaims<JoinedUnitOfWork> {
    private final CallerTransaction tx;

    public JoinedIdempotencyClaims(CallerTransaction tx) {
        this.tx = Objects.requireNonNull(tx, "tx");
    }

    @Override
    public Attempt attempt(ScopedKey key, Fingerprint fingerprint, KeyPolicy policy, Duration wait,
            Effect<? super JoinedUnitOfWork, StoredResponse> effect) {
        long deadline = System.nanoTime() + wait.toNanos();
        return Joined.run(tx, "idempotent request", (c, unit) -> {
            Optional<KeyRecord> committed = IdempotencyRows.find(c, key);
            if (committed.isPresent() && committed.get() instanceof KeyRecord.Completed) {
                return new Attempt.Held(committed.get());
            }
            return PostgresIdempotencyClaims.claimAndRun(c, key, fingerprint, policy, deadline,
                    new PostgresIdempotencyClaims.ClaimUnit() {
                        @Override
                        public StoredResponse runEffect() {
                            return Joined.effect(tx, effect, unit);
                        }

                        @Override
                        public void abandon() {
                            unit.abandon();
                        }
                    });
        });
    }

    @Override
    public StoredResponse runWithoutKey(Effect<? super JoinedUnitOfWork, StoredResponse> effect) {
        return Joined.run(tx, "request without a key", (c, unit) -> {
            StoredResponse response = Joined.effect(tx, effect, unit);
            if (response.isServerError()) {
                unit.abandon();
            }
            return response;
        });
    }

    @Override
    public Optional<KeyRecord> find(ScopedKey key) {
        Objects.requireNonNull(key, "key");
        return Joined.run(tx, "idempotency read", (c, unit) -> IdempotencyRows.find(c, key));
    }
}
