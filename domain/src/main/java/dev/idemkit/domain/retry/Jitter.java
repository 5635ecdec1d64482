package dev.idemkit.domain.retry;

/** How a backoff ceiling is spread over time so that clients failing together do not retry together. */
public enum Jitter {
    /** {@code random(0, ceiling)}: the widest spread, AWS's recommendation and the default. */
    FULL,
    /** {@code ceiling/2 + random(0, ceiling/2)}: the seed document's formula. */
    EQUAL,
    /** exactly the ceiling: every client retries at the same instant (the thundering herd). */
    NONE
}
