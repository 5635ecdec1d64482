package dev.idemkit.ports.out;

/** A running consumer of one queue. */
public interface Subscription extends AutoCloseable {
    /**
     * Stops taking new deliveries and waits up to the transport's grace period for in-flight ones to
     * settle; deliveries not settled by then are released back to the broker, never lost.
     */
    @Override
    void close();
}
