/**
 * The HTTP Idempotency-Key state machine (draft-ietf-httpapi-idempotency-key-header, Stripe's
 * behaviour): new -> in progress -> completed(response), keys scoped per client. {@code KeyMachine.parse}
 * rejects a malformed key (400); {@code KeyMachine.decide} answers execute (also for an in-progress claim past
 * its lease), replay, wait for the first, or fingerprint mismatch (422); the service that runs the machine
 * answers 409 when waiting for the first runs past its bound.
 */
package dev.idemkit.domain.httpkey;
