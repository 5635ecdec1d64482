/**
 * The HTTP Idempotency-Key state machine (draft-ietf-httpapi-idempotency-key-header, Stripe's
 * behaviour): new -> in progress -> completed(response), with the decisions execute, replay, wait for
 * the first, conflict (409), fingerprint mismatch (422) and bad request (400), keys scoped per client.
 */
package dev.idemkit.domain.httpkey;
