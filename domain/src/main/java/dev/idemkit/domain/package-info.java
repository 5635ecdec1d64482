/**
 * The pure core of idemkit: values shared by every strategy (message ids, consumer names,
 * fingerprints, outcomes) and, in sub-packages, each strategy as a pure state transition,
 * the retry/backoff math, dead-letter records and the HTTP Idempotency-Key state machine.
 *
 * <p>Nothing here performs I/O, reads the clock or draws random numbers: time and randomness are
 * passed in, so every decision is a deterministic function that property tests can check and the
 * runtime can reuse.
 */
package dev.idemkit.domain;
