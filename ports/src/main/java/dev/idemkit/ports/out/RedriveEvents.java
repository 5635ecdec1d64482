package dev.idemkit.ports.out;

import dev.idemkit.domain.deadletter.Approval;

/**
 * The redrive operation's hook per dead letter (a tracer opens a span in the trace the dead letter's message carries).
 * Implementations are cheap, thread-safe and never throw.
 */
@FunctionalInterface
public interface RedriveEvents {

    /** The redrive of {@code entry}, approved by {@code approval}, begins; the observation is told how it ended. */
    Observation started(String queue, DeadLetterEntry entry, Approval approval);

    /** Observes nothing. */
    static RedriveEvents none() {
        return (queue, entry, approval) -> action -> { };
    }

    /** One dead letter's redrive. */
    @FunctionalInterface
    interface Observation {
        /** Ended: {@code action} is what was done (the redrive action's name, or {@code failed}). */
        void finished(String action);

        /** Current on the calling thread while the dead letter is moved. */
        default ConsumerEvents.Scope enter() {
            return ConsumerEvents.Scope.NONE;
        }
    }
}
