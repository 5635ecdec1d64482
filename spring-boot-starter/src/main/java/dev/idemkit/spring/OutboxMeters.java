package dev.idemkit.spring;

import dev.idemkit.ports.out.OutboxEvents;
import dev.idemkit.ports.out.OutboxMaintenance;

/**
 * Where the starter's outbox relay reports: what it published, retried and parked ({@link OutboxEvents}), and the
 * outbox's state read every few seconds. Micrometer when a registry is there, nothing otherwise.
 */
interface OutboxMeters extends OutboxEvents {
    OutboxMeters NONE = new OutboxMeters() {
        @Override
        public void published(int n) {}

        @Override
        public void failed() {}

        @Override
        public void parked() {}

        @Override
        public void state(OutboxMaintenance.Stats stats) {}
    };

    /** The rows waiting, the parked ones and the age of the oldest waiting row, as last read. */
    void state(OutboxMaintenance.Stats stats);
}
