package dev.idemkit.ports.out;

/**
 * Everything a store of the outbox offers, by role: the relay's hand-out and wake-up ({@link OutboxRelayStore}), the
 * operators' parked-row actions ({@link ParkedOutbox}) and maintenance ({@link OutboxMaintenance}). A store implements
 * this; each user depends on the role it needs.
 */
public interface OutboxStore extends OutboxRelayStore, ParkedOutbox, OutboxMaintenance {
}
