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
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.IdempotencyClaims;
import dev.idemkit.ports.out.IdempotencyClaims.Attempt;
import dev.idemkit.ports.out.IdempotencyRecords;
import dev.idemkit.ports.out.NoTransaction;
import dev.idemkit.ports.out.StagedIdempotencyRecords;
import dev.idemkit.ports.out.StoreUnavailableException;
import dev.idemkit.ports.out.UnitOfWork;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The one Idempotency-Key flow, on top of {@link KeyMachine}, for every store: parse the key, let the store's
 * {@link IdempotencyClaims#attempt atomic step} claim it and run the request once, replay the stored response to every
 * retry with the same fingerprint, refuse another request under the same key (422).
 *
 * <p>A request that finds the first still running waits for it (bounded by the policy, polling with backoff from 2 ms
 * to 50 ms, or blocked on the store's row lock where the store waits itself) and then replays, so 100 parallel
 * same-key requests produce one execution and 100 identical responses; past the bound it answers 409. A 5xx or an
 * exception releases the key. A request whose claim was lost while it ran answers with the key's own answer once there
 * is one, else with a 500 problem {@code claim-lost} that tells the client the outcome is unknown. Thread-safe.
 *
 * @param <U> the unit of work the request's effect runs in
 */
public final class IdempotentRequestService<U extends UnitOfWork> implements IdempotentRequests<U> {
    private static final System.Logger LOG = System.getLogger(IdempotentRequestService.class.getName());
    /** Attempts of one request whose record changed under them (expired, released) before the store is called unwell. */
    static final int AGAIN_LIMIT = 3;

    private final IdempotencyClaims<U> claims;
    private final KeyPolicy policy;
    private final ReplayCache replays;

    /** With {@link ReplayCache#defaults()}: replays of responses this process saw complete skip the store. */
    public IdempotentRequestService(IdempotencyClaims<U> claims, KeyPolicy policy) {
        this(claims, policy, ReplayCache.defaults());
    }

    /** Every expiry is the store's to decide, on its own clock; {@code replays} only ever holds completed responses. */
    public IdempotentRequestService(IdempotencyClaims<U> claims, KeyPolicy policy, ReplayCache replays) {
        this.claims = Objects.requireNonNull(claims, "claims");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.replays = Objects.requireNonNull(replays, "replays");
    }

    /** The flow on records that cannot share a transaction with the effect (claim, run, store): {@link LeasedClaims}. */
    public static IdempotentRequestService<NoTransaction> overRecords(IdempotencyRecords records, KeyPolicy policy) {
        return new IdempotentRequestService<>(LeasedClaims.over(records), policy);
    }

    /**
     * The flow on records whose completion applies the effect's staged writes with the response, atomically on the
     * claim's fence ({@link LeasedClaims#staged}): an effect that writes only through its unit of work runs exactly
     * once per key.
     */
    public static <U extends UnitOfWork> IdempotentRequestService<U> overStagedRecords(
            StagedIdempotencyRecords<U> records, KeyPolicy policy) {
        return new IdempotentRequestService<>(LeasedClaims.staged(records), policy);
    }

    @Override
    public Reply handle(Request request, Effect<? super U, StoredResponse> handler) {
        // what is stored, and answered, never carries credential headers (StoredResponse.storable)
        Effect<U, StoredResponse> execution = work -> handler.run(work).storable();
        Optional<IdempotencyKey> key;
        try {
            key = KeyMachine.parse(request.idempotencyKeyHeader(), policy.requirement());
        } catch (InvalidKeyException e) {
            return new Reply(Problems.badRequest(e.getMessage()), false);
        }
        if (key.isEmpty()) {
            return new Reply(claims.runWithoutKey(handler), false); // nothing is stored: the response as it is
        }
        ScopedKey scoped = new ScopedKey(request.client(), key.get());
        Fingerprint fingerprint = Fingerprint.ofRequest(request.method(), request.path(), request.canonicalBody());
        Optional<ReplayCache.Entry> cached = replays.get(scoped);
        if (cached.isPresent()) {
            return cached.get().fingerprint().equals(fingerprint) ? new Reply(cached.get().response(), true)
                    : new Reply(Problems.mismatch(), false);
        }
        long deadline = System.nanoTime() + policy.waitBound().toNanos();
        long pause = 2;
        int vanished = 0;
        while (true) {
            Duration left = Duration.ofNanos(Math.max(1_000_000, deadline - System.nanoTime()));
            Attempt attempt = claims.attempt(scoped, fingerprint, policy, left, execution);
            if (attempt instanceof Attempt.Ran ran) {
                replays.putCompleted(scoped, fingerprint, ran.response()); // stored with the key (a 5xx is not kept)
                return new Reply(ran.response(), false);
            }
            if (attempt instanceof Attempt.RanButLost) {
                LOG.log(Level.ERROR, "idempotency-key decision=claim-lost client={0}: the request ran past its claim's"
                        + " lease and another request may hold the key; its response is not stored",
                        scoped.client().value());
                return answerOfTheKey(scoped, fingerprint, deadline);
            }
            if (attempt instanceof Attempt.Busy) {
                return new Reply(Problems.conflict(), false);
            }
            if (attempt instanceof Attempt.Held held) {
                if (held.live() instanceof KeyRecord.Completed completed) {
                    replays.putCompleted(scoped, completed.fingerprint(), completed.response());
                }
                KeyDecision decision = KeyMachine.decideLive(Optional.of(held.live()), fingerprint);
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
            } else if (++vanished >= AGAIN_LIMIT) { // Again: the record changed under the attempt, again and again
                throw new StoreUnavailableException("the Idempotency-Key record of client " + scoped.client().value()
                        + " vanished under " + AGAIN_LIMIT + " attempts of one request; retry the request", null);
            }
        }
    }

    /** After a lost claim: the key's own answer once another request stored one, else "outcome unknown". */
    private Reply answerOfTheKey(ScopedKey key, Fingerprint fingerprint, long deadline) {
        long pause = 2;
        do {
            Optional<KeyRecord> live = claims.find(key);
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

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the first request with this key", e);
        }
    }
}
