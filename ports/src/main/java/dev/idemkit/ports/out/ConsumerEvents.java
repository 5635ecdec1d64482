package dev.idemkit.ports.out;

import dev.idemkit.domain.Message;
import dev.idemkit.domain.ConsumerName;
import java.time.Duration;

/** Observes the consumer runtime's decisions (for metrics). Must be cheap and must not throw. */
@FunctionalInterface
public interface ConsumerEvents {

    /** The decision taken for one delivery. */
    enum Decision { PROCESSED, DUPLICATE, STALE, RETRIED, DEAD_LETTERED }

    /**
     * @param storeLatency time spent in the store's guarded step (zero when the store was not reached)
     */
    void onDecision(ConsumerName consumer, Decision decision, Duration storeLatency);

    /**
     * The same, with the message it was taken for (a trace of the delivery ends here); the runtimes call this one. By
     * default it is {@link #onDecision(ConsumerName, Decision, Duration)}.
     */
    default void onDecision(ConsumerName consumer, Decision decision, Duration storeLatency, Message message) {
        onDecision(consumer, decision, storeLatency);
    }

    static ConsumerEvents none() {
        return (c, d, l) -> { };
    }
}
