package dev.idemkit.ports.out;

/** Observes the outbox relay (for metrics). Must be cheap and must not throw. */
public interface OutboxEvents {

    /** {@code n} rows were confirmed by the broker and recorded as sent. */
    void published(int n);

    /** A publish failed and will be tried again. */
    void failed();

    /** A row was parked with its reason. */
    void parked();

    static OutboxEvents none() {
        return new OutboxEvents() {
            @Override
            public void published(int n) {}

            @Override
            public void failed() {}

            @Override
            public void parked() {}
        };
    }
}
