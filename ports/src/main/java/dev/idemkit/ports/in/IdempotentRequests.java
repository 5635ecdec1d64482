package dev.idemkit.ports.in;

import dev.idemkit.domain.httpkey.ClientId;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.UnitOfWork;

/**
 * Runs a request at most once per (client, Idempotency-Key) and replays its response to retries.
 *
 * @param <U> the unit of work the request's effect runs in (the claim's, where the store has one)
 */
public interface IdempotentRequests<U extends UnitOfWork> {

    /** A request as the HTTP layer saw it; the body is already canonical (e.g. JSON with sorted keys). */
    record Request(ClientId client, String idempotencyKeyHeader, String method, String path, byte[] canonicalBody) {}

    /** The response to send and whether it is a replay (send {@code Idempotent-Replayed: true}). */
    record Reply(StoredResponse response, boolean replayed) {}

    /**
     * Runs {@code execution} when the request is allowed to run; a 5xx response or an exception releases the key.
     *
     * @return the executed or replayed response, or a problem response: 400 (key missing or malformed),
     *     409 (the first is still running past the wait bound), 422 (key reused for another request)
     */
    Reply handle(Request request, Effect<? super U, StoredResponse> execution);
}
