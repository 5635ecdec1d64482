/**
 * Dead letters: the record a failed message carries (origin queue, reason, every attempt with its
 * timestamp and error), the attempt history that travels with a message between retries, the alert
 * policy, and redrive, which is never automatic: it needs an approval and skips messages the inbox
 * already holds as processed. Failure groups ({@link dev.idemkit.domain.deadletter.FailureShape},
 * {@link dev.idemkit.domain.deadletter.FailureGroup}) gather the dead letters that failed the same way, so that an
 * operator reads one row, and redrives one group, where a hundred messages failed for one cause.
 */
package dev.idemkit.domain.deadletter;
