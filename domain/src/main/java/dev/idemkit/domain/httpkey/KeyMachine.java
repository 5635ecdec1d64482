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
        if (stored.isEmpty() || stored.get().isExpired(now)) {
            return new KeyDecision.Execute();
        }
        KeyRecord record = stored.get();
        if (!record.fingerprint().equals(request)) {
            return new KeyDecision.FingerprintMismatch();
        }
        if (record instanceof KeyRecord.Completed done) {
            return new KeyDecision.Replay(done.response());
        }
        return new KeyDecision.WaitForFirst();
    }

    /**
     * The record a request starts under when it is allowed to execute. It lives for the policy's
     * lease, not its TTL: if the holder crashes, the claim lapses and a retry can execute.
     */
    public static KeyRecord.InProgress begin(Fingerprint request, Instant now, KeyPolicy policy) {
        return new KeyRecord.InProgress(request, now, now.plus(policy.lease()));
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
