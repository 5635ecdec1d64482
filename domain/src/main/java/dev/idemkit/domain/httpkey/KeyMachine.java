package dev.idemkit.domain.httpkey;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.InvalidKeyException;
import java.time.Instant;
import java.util.Optional;

/** The Idempotency-Key decisions as pure functions of (stored record, request fingerprint, now). */
public final class KeyMachine {
    private KeyMachine() {}

    /**
     * Parses the header; a missing header is a bad request when the key is required, and "no key" otherwise.
     *
     * @return the key, or empty when absent and optional
     * @throws InvalidKeyException when missing-and-required or malformed, naming the rule
     */
    public static Optional<IdempotencyKey> parse(String header, KeyPolicy.Requirement requirement) {
        if (header == null) {
            if (requirement == KeyPolicy.Requirement.REQUIRED) {
                throw new InvalidKeyException("Idempotency-Key header is required for this request");
            }
            return Optional.empty();
        }
        return Optional.of(IdempotencyKey.parseHeader(header));
    }

    /**
     * The decision for a request whose key maps to {@code stored}.
     *
     * <p>Absent or expired: execute. A different fingerprint, running or completed: 422. Completed with
     * the same fingerprint: replay. Running with the same fingerprint: wait for the first.
     */
    public static KeyDecision decide(Optional<KeyRecord> stored, Fingerprint request, Instant now) {
        return decideLive(stored.filter(r -> !r.isExpired(now)), request);
    }

    /**
     * As {@link #decide}, for a record that the store already judged live on its own clock: no caller's clock
     * second-guesses it (two callers whose clocks differ must not disagree about whether a claim expired).
     */
    public static KeyDecision decideLive(Optional<KeyRecord> live, Fingerprint request) {
        if (live.isEmpty()) {
            return new KeyDecision.Execute();
        }
        KeyRecord record = live.get();
        if (!record.fingerprint().equals(request)) {
            return new KeyDecision.FingerprintMismatch();
        }
        if (record instanceof KeyRecord.Completed done) {
            return new KeyDecision.Replay(done.response());
        }
        return new KeyDecision.WaitForFirst();
    }

    /**
     * The record a request starts under when it is allowed to execute, under its own fence. It lives for the
     * policy's lease, not its TTL: if the holder crashes, the claim lapses and a retry can execute; a holder
     * that is still running renews it.
     */
    public static KeyRecord.InProgress begin(Fingerprint request, String fence, Instant now, KeyPolicy policy) {
        return new KeyRecord.InProgress(request, now, now.plus(policy.lease()), fence);
    }

    /**
     * The record after the request finished with {@code response}: completed for a final answer,
     * empty (the key is released) for a 5xx so that the client's retry can run.
     */
    public static Optional<KeyRecord> finish(KeyRecord.InProgress running, StoredResponse response, Instant now,
            KeyPolicy policy) {
        if (response.isServerError()) {
            return Optional.empty();
        }
        return Optional.of(new KeyRecord.Completed(running.fingerprint(), response, running.createdAt(),
                now.plus(policy.ttl())));
    }
}
