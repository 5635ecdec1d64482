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
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.EffectFailedException;
import dev.idemkit.ports.out.IdempotencyRecords;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * The Idempotency-Key flow on top of {@link KeyMachine}: claim the (client, key) record atomically,
 * execute once, store the final response, replay it to every retry with the same fingerprint.
 *
 * <p>A request that finds the first still running waits for it (bounded by the policy, polling with
 * backoff from 2 ms to 50 ms) and then replays, so 100 parallel same-key requests produce one
 * execution and 100 identical responses; past the bound it answers 409. A 5xx or an exception
 * releases the key. Thread-safe.
 */
public final class IdempotentRequestService implements IdempotentRequests {
    private final IdempotencyRecords records;
    private final KeyPolicy policy;
    private final Clock clock;

    public IdempotentRequestService(IdempotencyRecords records, KeyPolicy policy, Clock clock) {
        this.records = Objects.requireNonNull(records, "records");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.clock = Objects.requireNonNull(clock, "clock");
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
            Instant now = clock.now();
            KeyRecord.InProgress mine = KeyMachine.begin(fingerprint, now, policy);
            Optional<KeyRecord> existing = records.tryBegin(scoped, mine, now);
            if (existing.isEmpty()) {
                return new Reply(executeHolding(scoped, mine, execution), false);
            }
            KeyDecision decision = KeyMachine.decide(existing, fingerprint, now);
            if (decision instanceof KeyDecision.Replay replay) {
                return new Reply(replay.response(), true);
            }
            if (decision instanceof KeyDecision.FingerprintMismatch) {
                return new Reply(Problems.mismatch(), false);
            }
            if (decision instanceof KeyDecision.WaitForFirst && System.nanoTime() < deadline) {
                sleep(pause);
                pause = Math.min(50, pause * 2);
                continue;
            }
            if (decision instanceof KeyDecision.Execute && System.nanoTime() < deadline) {
                continue; // the record expired between the store's check and ours: claim again
            }
            return new Reply(Problems.conflict(), false);
        }
    }

    private StoredResponse executeHolding(ScopedKey key, KeyRecord.InProgress mine, Execution execution) {
        StoredResponse response;
        try {
            response = execution.execute();
        } catch (Throwable t) {
            records.release(key, mine);
            throw EffectFailedException.propagate(t);
        }
        Optional<KeyRecord> finished = KeyMachine.finish(mine, response, clock.now(), policy);
        if (finished.isEmpty()) {
            records.release(key, mine);
        } else {
            records.complete(key, (KeyRecord.Completed) finished.get());
        }
        return response;
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
