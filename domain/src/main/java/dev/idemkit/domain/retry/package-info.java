/**
 * Retry math: exponential backoff with FULL (default), EQUAL and NONE jitter as pure functions of
 * (attempt, random number), the retry policy with its failure classification, and the decision
 * retry-after(delay) or dead-letter(reason). Only adapters decide how to wait.
 */
package dev.idemkit.domain.retry;
