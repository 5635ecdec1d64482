package dev.idemkit.ports.out;

import dev.idemkit.domain.ConsumerName;
import java.time.Duration;

/**
 * The hooks of the delivery flow (docs/ARCHITECTURE.md section 13): metrics and tracing observe every delivery through
 * here, whichever front door it came in by. Implementations must be cheap, thread-safe and must not throw.
 *
 * <p>A metric needs only {@link #onDecision}; a tracer overrides {@link #started} and keeps what it needs for one
 * delivery in the {@link Observation} it returns (the flow hands that same object back at the end, so nothing is
 * looked up by message).
 */
@FunctionalInterface
public interface ConsumerEvents {

    /** The decision taken for one delivery. */
    enum Decision { PROCESSED, DUPLICATE, STALE, RETRIED, DEAD_LETTERED }

    /**
     * @param storeLatency time spent in the store's guarded step (zero when the store was not reached)
     */
    void onDecision(ConsumerName consumer, Decision decision, Duration storeLatency);

    /**
     * {@code delivery} entered the flow of {@code consumer}. The flow tells the returned observation how it ended:
     * exactly one of {@link Observation#decided} or {@link Observation#abandoned}, from whichever thread settles it. By
     * default an observation that reports the decision to {@link #onDecision}.
     */
    default Observation started(ConsumerName consumer, Delivery delivery) {
        return (decision, storeLatency) -> onDecision(consumer, decision, storeLatency);
    }

    /** Observes nothing. */
    static ConsumerEvents none() {
        return (c, d, l) -> { };
    }

    /** Every one of {@code all}, in order, each with its own observation of a delivery. */
    static ConsumerEvents all(java.util.List<? extends ConsumerEvents> all) {
        java.util.List<ConsumerEvents> each = java.util.List.copyOf(all);
        if (each.size() == 1) {
            return each.get(0);
        }
        return new ConsumerEvents() {
            @Override
            public void onDecision(ConsumerName consumer, Decision decision, Duration storeLatency) {
                each.forEach(e -> e.onDecision(consumer, decision, storeLatency));
            }

            @Override
            public Observation started(ConsumerName consumer, Delivery delivery) {
                java.util.List<Observation> observations = each.stream().map(e -> e.started(consumer, delivery))
                        .toList();
                return new Observation() {
                    @Override
                    public void decided(Decision decision, Duration storeLatency) {
                        observations.forEach(o -> o.decided(decision, storeLatency));
                    }

                    @Override
                    public void failed(Throwable failure) {
                        observations.forEach(o -> o.failed(failure));
                    }

                    @Override
                    public void abandoned(Throwable cause) {
                        observations.forEach(o -> o.abandoned(cause));
                    }

                    @Override
                    public Scope enter() {
                        java.util.List<Scope> scopes = observations.stream().map(Observation::enter).toList();
                        return () -> {
                            for (int i = scopes.size() - 1; i >= 0; i--) {
                                scopes.get(i).close();
                            }
                        };
                    }
                };
            }
        };
    }

    /** One delivery's way through the flow. */
    @FunctionalInterface
    interface Observation {

        /** The flow settled the delivery with {@code decision}; the last call this observation gets. */
        void decided(Decision decision, Duration storeLatency);

        /**
         * The store's step (the effect, or the store itself) failed with {@code failure}; a {@link #decided} (retried
         * or dead-lettered) follows.
         */
        default void failed(Throwable failure) {
        }

        /**
         * The flow could not settle the delivery ({@code cause}: the transport failed); the broker still holds it and
         * delivers it again. The last call this observation gets.
         */
        default void abandoned(Throwable cause) {
        }

        /**
         * Makes this delivery the current one on the calling thread while the effect runs there (a tracer makes its
         * span current); the flow closes the scope when the store's step returns.
         */
        default Scope enter() {
            return Scope.NONE;
        }
    }

    /** What {@link Observation#enter} opened; closing it never throws. */
    @FunctionalInterface
    interface Scope extends AutoCloseable {
        Scope NONE = () -> { };

        @Override
        void close();
    }
}
