package dev.idemkit.domain.httpkey;

import java.util.Objects;

/** What to do with a request that carries an Idempotency-Key. */
public sealed interface KeyDecision {
    /** The key is new (or expired): run the request. */
    record Execute() implements KeyDecision {}

    /** The same request already completed: replay its stored response with {@code Idempotent-Replayed: true}. */
    record Replay(StoredResponse response) implements KeyDecision {
        public Replay {
            Objects.requireNonNull(response, "response");
        }
    }

    /** The same request is still running: wait (bounded) for it to complete, then decide again. */
    record WaitForFirst() implements KeyDecision {}

    /** 422: the key was used for a different request (method, path or body). */
    record FingerprintMismatch() implements KeyDecision {}
}
