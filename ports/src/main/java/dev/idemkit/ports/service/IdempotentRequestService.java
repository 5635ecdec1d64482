package dev.idemkit.ports.service;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.InvalidKeyException;
import dev.idemkit.domain.httpkey.IdempotencyKey;
import dev.idemkit.domain.httpkey.KeyDecision;
import dev.idemkit.domain.httpkey.KeyMachine;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.in.IdempotentRequests;
import dev.idemkit.ports.out.EffectFailedException;
import dev.idemkit.ports.out.IdempotencyRecords;
import dev.idemkit.ports.out.IdempotencyRecords.Begin;
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
 * The Idempotency-Key flow on top of {@link KeyMachine}: claim the (client, key) record atomically under a
 * fence of its own, execute once, store the final response, replay it to every retry with the same
 * fingerprint.
 *
 * <p>A request that finds the first still running waits for it (bounded by the policy, polling with
 * backoff from 2 ms to 50 ms) and then replays, so 100 parallel same-key requests produce one execution
 * and 100 identical responses; past the bound it answers 409. A 5xx or an exception releases the key.
 *
 * <p>Leases: while a request executes, its claim is renewed every third of the lease, so a request
 * slower than the lease keeps its key. Expiry is the store's to decide, on its own clock. If the claim
 * is lost all the same (the process stalled past its lease and another request took the key over), the
 * fence stops this request from storing its response or releasing the key: it answers with the key's
 * own answer once there is one, else with a 500 problem {@code claim-lost} that tells the client the
 * outcome is unknown. Its effect may then have run beside the other's: outside a store that makes the
 * effect conditional on the fence, that is "duplicates reduced, not excluded".
 *
 * <p>A {@code complete} that fails (the store unreachable after the effect ran) propagates as a
 * StoreUnavailableException (a 503); the claim is left to lapse after its lease, so a retry during the
 * lease waits and gets 409, and one after it runs again. Thread-safe.
 */
public final class IdempotentRequestService implements IdempotentRequests {
    private static final System.Logger LOG = System.getLogger(IdempotentRequestService.class.getName());
    /** Lease renewals of every running request: a few threads, so that one slow store call delays no other lease much. */
    private static final ScheduledExecutorService RENEWALS = Executors.newScheduledThreadPool(4, r -> {
        Thread t = new Thread(r, "idemkit-idempotency-lease");
        t.setDaemon(true);
        return t;
    });

    private final IdempotencyRecords records;
    private final KeyPolicy policy;

    /** No clock: every expiry is the store's to decide, on its own clock. */
    public IdempotentRequestService(IdempotencyRecords records, KeyPolicy policy) {
        this.records = Objects.requireNonNull(records, "records");
        this.policy = Objects.requireNonNull(policy, "policy");
    }

    @Override
    public Reply handle(Request request, Execution execution) {
        Optional<IdempotencyKey> key;
        try {
            key = KeyMachine.parse(request.idempotencyKeyHeader(), policy.requirement());
        } catch (InvalidKeyException e) {
            return new Reply(Problems.badRequest(e.getMessage()), false);
        }
        if (key.isEmpty()) {
            return new Reply(run(execution), false);
        }
        ScopedKey scoped = new ScopedKey(request.client(), key.get());
        Fingerprint fingerprint = Fingerprint.ofRequest(request.method(), request.path(), request.canonicalBody());
        long deadline = System.nanoTime() + policy.waitBound().toNanos();
        long pause = 2;
        while (true) {
            Begin begun = records.tryBegin(scoped, fingerprint, UUID.randomUUID().toString(), policy.lease());
            if (begun instanceof Begin.Claimed claimed) {
                return executeHolding(scoped, claimed.claim(), execution, deadline);
            }
            KeyDecision decision = KeyMachine.decideLive(Optional.of(((Begin.Held) begun).live()), fingerprint);
            if (decision instanceof KeyDecision.Replay replay) {
                return new Reply(replay.response(), true);
            }
            if (decision instanceof KeyDecision.FingerprintMismatch) {
                return new Reply(Problems.mismatch(), false);
            }
            if (System.nanoTime() >= deadline) {
                return new Reply(Problems.conflict(), false);
            }
            if (decision instanceof KeyDecision.WaitForFirst) {
                sleep(pause);
                pause = Math.min(50, pause * 2);
            }
        }
    }

    private Reply executeHolding(ScopedKey key, KeyRecord.InProgress claim, Execution execution, long deadline) {
        AtomicBoolean lost = new AtomicBoolean();
        long every = Math.max(1, policy.lease().toMillis() / 3);
        ScheduledFuture<?> renewal = RENEWALS.scheduleWithFixedDelay(() -> renew(key, claim, lost), every, every,
                TimeUnit.MILLISECONDS);
        StoredResponse response;
        try {
            response = execution.execute();
        } catch (Throwable t) {
            renewal.cancel(false);
            records.release(key, claim);
            throw EffectFailedException.propagate(t);
        } finally {
            renewal.cancel(false);
        }
        if (response.isServerError()) {
            records.release(key, claim);
            return new Reply(response, false);
        }
        if (!lost.get() && records.complete(key, claim, response, policy.ttl())) {
            return new Reply(response, false);
        }
        LOG.log(Level.ERROR, "idempotency-key decision=claim-lost client={0}: the request ran past its claim's lease"
                + " and another request may hold the key; its response is not stored", key.client().value());
        return answerOfTheKey(key, claim.fingerprint(), deadline);
    }

    private void renew(ScopedKey key, KeyRecord.InProgress claim, AtomicBoolean lost) {
        try {
            if (!lost.get() && !records.renew(key, claim, policy.lease())) {
                lost.set(true);
            }
        } catch (RuntimeException e) {
            // the store is unreachable: the next renewal tries again; the store decides whether the lease lapsed
            LOG.log(Level.WARNING, "idempotency-key lease renewal failed client={0}: {1}", key.client().value(),
                    e.toString());
        }
    }

    /** After a lost claim: the key's own answer once another request stored one, else "outcome unknown". */
    private Reply answerOfTheKey(ScopedKey key, Fingerprint fingerprint, long deadline) {
        long pause = 2;
        do {
            Optional<KeyRecord> live = records.find(key);
            KeyDecision decision = KeyMachine.decideLive(live, fingerprint);
            if (decision instanceof KeyDecision.Replay replay) {
                return new Reply(replay.response(), true);
            }
            if (!(decision instanceof KeyDecision.WaitForFirst)) {
                break;
            }
            sleep(pause);
            pause = Math.min(50, pause * 2);
        } while (System.nanoTime() < deadline);
        return new Reply(Problems.claimLost(), false);
    }

    private static StoredResponse run(Execution execution) {
        try {
            return execution.execute();
        } catch (Exception e) {
            throw EffectFailedException.propagate(e);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(Duration.ofMillis(millis).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the first request with this key", e);
        }
    }
}
