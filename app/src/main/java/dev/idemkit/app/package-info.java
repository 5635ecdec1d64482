/**
 * The runnable idemkit: the only module that knows several adapters. It assembles them from
 * configuration, serves the Idempotency-Key payments API, runs the source document's five exercises
 * and offers dead-letter tooling on the command line.
 */
package dev.idemkit.app;
