/**
 * The inbox strategy: the key (consumer name, message id) is recorded in the same unit of work as
 * the effect; the store's unique constraint, never a read-then-write, decides who runs.
 */
package dev.idemkit.domain.inbox;
