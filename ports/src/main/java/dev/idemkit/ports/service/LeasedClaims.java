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
import dev.idemkit.ports.out.StagedIdempotencyRecords;
import dev.idemkit.ports.out.UnitOfWork;
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
 * The atomic step of the Idempotency-Key flow on a store that cannot hold a claim uncommitted while the effect runs:
 * claim the record under a fence of its own and a lease ({@link IdempotencyRecords#tryBegin}), run the effect, store
 * the response ({@link IdempotencyRecords#complete}) — or release the key on a 5xx or an exception (when the release
 * itself fails, the claim lapses after its lease: retries meanwhile wait and get 409).
 *
 * <p>Two kinds, one flow. {@link #over} runs the effect on its own ({@link NoTransaction}): a crash between effect and
 * completion leaves the effect done and the key to lapse, so a retry runs it again — "duplicates reduced, not
 * excluded". {@link #staged} gives the effect the store's unit of work, in which it stages its writes; the completion
 * applies them with the response in one atomic step on the fence ({@link StagedIdempotencyRecords#complete}), so an
 * effect written only there runs exactly once per key: a crash before the completion wrote nothing, a 5xx or an
 * exception drops what was staged.
 *
 * <p>While the effect runs, the claim is renewed every third of the lease, so a request slower than the lease keeps
 * its key. Expiry is the store's to decide, on its own clock. If the claim is lost all the same (the process stalled
 * past its lease and another request took the key over), the fence stops this request from storing its response,
 * applying staged writes or releasing the key: the attempt reports {@link Attempt.RanButLost}.
 *
 * <p>A {@code complete} that fails (the store unreachable after the effect ran) propagates as a
 * StoreUnavailableException; the claim is left to lapse after its lease. Thread-safe.
 *
 * @param <U> the unit of work the effect runs in
 */
public final class LeasedClaims<U extends UnitOfWork> implements IdempotencyClaims<U> {
    private static final System.Logger LOG = System.getLogger(LeasedClaims.class.getName());
    /** Lease renewals of every running request: a few threads, so that one slow store call delays no other lease much. */
    private static final ScheduledExecutorService RENEWALS = Executors.newScheduledThreadPool(4, r -> {
        Thread t = new Thread(r, "idemkit-idempotency-lease");
        t.setDaemon(true);
        return t;
    });

    private final IdempotencyRecords records;
    private final Units<U> units;

    /** How a kind of leased claims opens, completes and applies the effect's unit of work. */
    private interface Units<U extends UnitOfWork> {
        U open(ScopedKey key);

        U openWithoutKey();

        boolean complete(ScopedKey key, KeyRecord.InProgress claim, U work, StoredResponse response, Duration ttl);

        void apply(U work);
    }

    private LeasedClaims(IdempotencyRecords records, Units<U> units) {
        this.records = Objects.requireNonNull(records, "records");
        this.units = units;
    }

    /** The effect runs on its own; only the response is stored with the key ("duplicates reduced, not excluded"). */
    public static LeasedClaims<NoTransaction> over(IdempotencyRecords records) {
        return new LeasedClaims<>(records, new Units<>() {
            @Override
            public NoTransaction open(ScopedKey key) {
                return NoTransaction.INSTANCE;
            }

            @Override
            public NoTransaction openWithoutKey() {
                return NoTransaction.INSTANCE;
            }

            @Override
            public boolean complete(ScopedKey key, KeyRecord.InProgress claim, NoTransaction work,
                    StoredResponse response, Duration ttl) {
                return records.complete(key, claim, response, ttl);
            }

            @Override
            public void apply(NoTransaction work) {}
        });
    }

    /** The effect stages its writes in the store's unit of work; they are applied with the response, atomically. */
    public static <U extends UnitOfWork> LeasedClaims<U> staged(StagedIdempotencyRecords<U> records) {
        return new LeasedClaims<>(records, new Units<>() {
            @Override
            public U open(ScopedKey key) {
                return records.open(key);
            }

            @Override
            public U openWithoutKey() {
                return records.openWithoutKey();
            }

            @Override
            public boolean complete(ScopedKey key, KeyRecord.InProgress claim, U work, StoredResponse response,
                    Duration ttl) {
                return records.complete(key, claim, work, response, ttl);
            }

            @Override
            public void apply(U work) {
                records.apply(work);
            }
        });
    }

    @Override
    public Attempt attempt(ScopedKey key, Fingerprint fingerprint, KeyPolicy policy, Duration wait,
            Effect<? super U, StoredResponse> effect) {
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
        U work;
        try {
            work = units.open(key);
            response = effect.run(work);
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
        if (!lost.get() && units.complete(key, claim, work, response, policy.ttl())) {
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
    public StoredResponse runWithoutKey(Effect<? super U, StoredResponse> effect) {
        U work = units.openWithoutKey();
        StoredResponse response;
        try {
            response = effect.run(work);
        } catch (Exception e) {
            throw EffectFailedException.propagate(e);
        }
        if (!response.isServerError()) { // a 5xx keeps nothing that was staged
            units.apply(work);
        }
        return response;
    }

    @Override
    public Optional<KeyRecord> find(ScopedKey key) {
        return records.find(key);
    }
}
