/**
 * Dead letters: the record a failed message carries (origin queue, reason, every attempt with its
 * timestamp and error), the attempt history that travels with a message between retries, the alert
 * policy, and redrive, which is never automatic: it needs an approval and skips messages the inbox
 * already holds as processed.
 */
package dev.idemkit.domain.deadletter;
