package dev.idemkit.ports.service;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.EffectFailedException;
import dev.idemkit.ports.out.IdempotencyClaims;
import dev.idemkit.ports.out.IdempotencyRecords;
import dev.idemkit.ports.out.IdempotencyRecords.Begin;
import dev.idemkit.ports.out.NoTransaction;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The atomic step of the Idempotency-Key flow on a store that cannot share a transaction with the effect: claim the
 * record under a fence of its own and a lease ({@link IdempotencyRecords#tryBegin}), run the effect, store the response
 * ({@link IdempotencyRecords#complete}) — or release the key on a 5xx or an exception (when the release itself fails,
 * the claim lapses after its lease: retries meanwhile wait and get 409).
 *
 * <p>While the effect runs, the claim is renewed every third of the lease, so a request slower than the lease keeps
 * its key. Expiry is the store's to decide, on its own clock. If the claim is lost all the same (the process stalled
 * past its lease and another request took the key over), the fence stops this request from storing its response or
 * releasing the key: the attempt reports {@link Attempt.RanButLost}. Its effect may then have run beside the
 * other's: outside a store that makes the effect conditional on the fence, "duplicates reduced, not excluded".
 *
 * <p>A {@code complete} that fails (the store unreachable after the effect ran) propagates as a
 * StoreUnavailableException; the claim is left to lapse after its lease. Thread-safe.
 */
public final class LeasedClaims implements IdempotencyClaims<NoTransaction> {
    private static final System.Logger LOG = System.getLogger(LeasedClaims.class.getName());
    /** Lease renewals of every running request: a few threads, so that one slow store call delays no other lease much. */
    private static final ScheduledExecutorService RENEWALS = Executors.newScheduledThreadPool(4, r -> {
        Thread t = new Thread(r, "idemkit-idempotency-lease");
        t.setDaemon(true);
        return t;
    });

    private final IdempotencyRecords records;

    public LeasedClaims(IdempotencyRecords records) {
        this.records = Objects.requireNonNull(records, "records");
    }

    @Override
    public Attempt attempt(ScopedKey key, Fingerprint fingerprint, KeyPolicy policy, Duration wait,
            Effect<? super NoTransaction, StoredResponse> effect) {
        Begin begun = records.tryBegin(key, fingerprint, UUID.randomUUID().toString(), policy.lease());
        if (begun instanceof Begin.Held held) {
            return new Attempt.Held(held.live());
        }
        KeyRecord.InProgress claim = ((Begin.Claimed) begun).claim();
        AtomicBoolean lost = new AtomicBoolean();
        long every = Math.max(1, policy.lease().toMillis() / 3);
        ScheduledFuture<?> renewal = RENEWALS.scheduleWithFixedDelay(() -> renew(key, claim, policy.lease(), lost),
                every, every, TimeUnit.MILLISECONDS);
        StoredResponse response;
        try {
            response = effect.run(NoTransaction.INSTANCE);
        } catch (Throwable t) {
            renewal.cancel(false);
            try {
                records.release(key, claim);
            } catch (RuntimeException releaseFailed) {
                // the effect's failure is the answer; the claim lapses after its lease
                t.addSuppressed(releaseFailed);
            }
            throw EffectFailedException.propagate(t);
        } finally {
            renewal.cancel(false);
        }
        if (response.isServerError()) {
            records.release(key, claim);
            return new Attempt.Ran(response);
        }
        if (!lost.get() && records.complete(key, claim, response, policy.ttl())) {
            return new Attempt.Ran(response);
        }
        return new Attempt.RanButLost(response);
    }

    private void renew(ScopedKey key, KeyRecord.InProgress claim, Duration lease, AtomicBoolean lost) {
        try {
            if (!lost.get() && !records.renew(key, claim, lease)) {
                lost.set(true);
            }
        } catch (RuntimeException e) {
            // the store is unreachable: the next renewal tries again; the store decides whether the lease lapsed
            LOG.log(Level.WARNING, "idempotency-key lease renewal failed client={0}: {1}", key.client().value(),
                    e.toString());
        }
    }

    @Override
    public StoredResponse runWithoutKey(Effect<? super NoTransaction, StoredResponse> effect) {
        try {
            return effect.run(NoTransaction.INSTANCE);
        } catch (Exception e) {
            throw EffectFailedException.propagate(e);
        }
    }

    @Override
    public Optional<KeyRecord> find(ScopedKey key) {
        return records.find(key);
    }
}
