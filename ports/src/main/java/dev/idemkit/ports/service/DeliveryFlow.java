package dev.idemkit.ports.service;

import dev.idemkit.domain.KeyRules;
import dev.idemkit.domain.Message;
import dev.idemkit.domain.MessageId;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.Printable;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.domain.retry.RandomSource;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.ConsumerEvents.Decision;
import dev.idemkit.ports.out.ConsumerEvents.Observation;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.Guarded;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.ports.out.LogPosition;
import dev.idemkit.ports.out.UnitOfWork;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The one flow that takes a delivery from "arrived" to "settled" (docs/ARCHITECTURE.md section 13): check it (a usable
 * id, a body within the size limit), run it through the inbox's atomic step (key and effect in one unit of work), then
 * acknowledge it, or retry it later, or dead-letter it with its reason and attempt history ({@link FailureStep}). It
 * never sleeps: a retry is the transport's to keep.
 *
 * <p>Every front door runs this: {@link ConsumerRuntime} (a transport's subscription), the {@link BatchingConsumer}'s
 * check and its per-delivery fallback, and adapters of other worlds (a Spring listener container) that turn what they
 * received into a {@link Delivery}. The {@link ConsumerEvents} hooks see each delivery start and end, whichever door it
 * came in by. Thread-safe.
 */
public final class DeliveryFlow {
    private static final System.Logger LOG = System.getLogger(DeliveryFlow.class.getName());

    private final ConsumerSettings settings;
    private final FailureStep failures;
    private final ConsumerEvents events;

    public DeliveryFlow(ConsumerSettings settings, RandomSource random, Clock clock, ConsumerEvents events) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.failures = new FailureStep(settings.retryPolicy(), random, clock);
        this.events = Objects.requireNonNull(events, "events");
    }

    /** The consumer's settings (its name is part of every key). */
    public ConsumerSettings settings() {
        return settings;
    }

    /** The check step: why {@code message} cannot be processed at all (no usable id, too big), or empty. */
    public Optional<String> rejection(Message message) {
        if (message.rawId() == null || message.rawId().isEmpty()) {
            return Optional.of("message has no message id; it cannot be de-duplicated");
        }
        Optional<String> broken = KeyRules.violation("message id", message.rawId());
        if (broken.isPresent()) {
            return broken;
        }
        int size = message.size();
        if (size > settings.maxBodyBytes()) {
            return Optional.of("body of " + size + " bytes exceeds the limit of " + settings.maxBodyBytes() + " bytes");
        }
        return Optional.empty();
    }

    /** The key {@code message} is recorded under; only for a message that passed {@link #rejection}. */
    public InboxKey key(Message message) {
        return new InboxKey(settings.name(), new MessageId(message.rawId()));
    }

    /**
     * Tells the hooks that {@code delivery} entered the flow; hand the observation to {@link #run} or settle it. A hook
     * that throws is logged and otherwise ignored: observing never changes how a delivery is settled.
     */
    public Observation started(Delivery delivery) {
        try {
            return new GuardedObservation(events.started(settings.name(), delivery));
        } catch (RuntimeException e) {
            hookFailed("started", e);
            return new GuardedObservation((decision, latency) -> { });
        }
    }

    private static void hookFailed(String hook, RuntimeException e) {
        LOG.log(Level.WARNING, "consumer events hook {0} failed (ignored): {1}", hook, e.toString());
    }

    /** An observation whose hooks never throw into the flow. */
    private static final class GuardedObservation implements Observation {
        private final Observation inner;

        GuardedObservation(Observation inner) {
            this.inner = inner;
        }

        @Override
        public void decided(Decision decision, Duration storeLatency) {
            guarded("decided", () -> inner.decided(decision, storeLatency));
        }

        @Override
        public void failed(Throwable failure) {
            guarded("failed", () -> inner.failed(failure));
        }

        @Override
        public void abandoned(Throwable cause) {
            guarded("abandoned", () -> inner.abandoned(cause));
        }

        @Override
        public ConsumerEvents.Scope enter() {
            ConsumerEvents.Scope scope;
            try {
                scope = inner.enter();
            } catch (RuntimeException e) {
                hookFailed("enter", e);
                return ConsumerEvents.Scope.NONE;
            }
            return () -> guarded("exit", scope::close);
        }

        private static void guarded(String hook, Runnable call) {
            try {
                call.run();
            } catch (RuntimeException e) {
                hookFailed(hook, e);
            }
        }
    }

    /** The whole flow for one delivery. */
    public <U extends UnitOfWork> void run(Delivery delivery, InboxStore<U> inbox, MessageHandler<? super U> handler) {
        run(delivery, started(delivery), inbox, handler);
    }

    /**
     * The whole flow for one delivery whose {@link #started} observation the caller holds: the delivery is settled
     * exactly once, or, if the transport fails to settle it, left with the broker (which delivers it again) and the
     * exception thrown.
     */
    public <U extends UnitOfWork> void run(Delivery delivery, Observation given, InboxStore<U> inbox,
            MessageHandler<? super U> handler) {
        Observation observation = given instanceof GuardedObservation ? given : new GuardedObservation(given);
        Message message = delivery.message();
        try {
            Optional<String> rejection = rejection(message);
            if (rejection.isPresent()) {
                report(delivery, observation, failures.reject(delivery, rejection.get()), Duration.ZERO);
                return;
            }
            long started = System.nanoTime();
            Guarded<Void> result;
            try (ConsumerEvents.Scope ignored = observation.enter()) {
                // where the delivery's partition stands once it is settled, committed with its effect where the
                // store keeps positions (section 14: offsets in the database)
                List<LogPosition> positions = inbox.keepsPositions() ? Delivery.positionsAfter(List.of(delivery))
                        : List.of();
                Effect<U, Void> effect = work -> {
                    handler.handle(message, work);
                    return null;
                };
                result = positions.isEmpty() ? inbox.runOnce(key(message), message.fingerprint(), effect)
                        : inbox.runOnce(key(message), message.fingerprint(), positions, effect);
            } catch (Throwable failure) {
                if (failure instanceof VirtualMachineError vme) {
                    throw vme;
                }
                Duration latency = Duration.ofNanos(System.nanoTime() - started);
                observation.failed(failure);
                report(delivery, observation, failures.fail(delivery, failure), latency);
                return;
            }
            settle(delivery, observation, result.outcome(), Duration.ofNanos(System.nanoTime() - started));
        } catch (RuntimeException | Error unsettled) {
            observation.abandoned(unsettled);
            throw unsettled;
        }
    }

    /**
     * Settles a delivery after the store's step returned {@code outcome} for it: a reused id (rejected) is
     * dead-lettered with the reason, anything else acknowledged.
     */
    public void settle(Delivery delivery, Observation given, Outcome outcome, Duration latency) {
        Observation observation = given instanceof GuardedObservation ? given : new GuardedObservation(given);
        if (outcome instanceof Outcome.Rejected rejected) {
            report(delivery, observation, failures.reject(delivery, rejected.reason()), latency);
            return;
        }
        delivery.ack();
        Decision decision = outcome.effectRan() ? Decision.PROCESSED
                : outcome instanceof Outcome.Stale ? Decision.STALE : Decision.DUPLICATE;
        log(Level.DEBUG, decision, delivery, null);
        observation.decided(decision, latency);
    }

    private void report(Delivery delivery, Observation observation, FailureStep.Settled settled, Duration latency) {
        if (settled.decision() == Decision.RETRIED) {
            log(Level.WARNING, Decision.RETRIED, delivery, settled.attempt().error() + "; retry in "
                    + settled.delay().toMillis() + " ms");
        } else {
            log(Level.ERROR, Decision.DEAD_LETTERED, delivery, settled.reason());
        }
        observation.decided(settled.decision(), latency);
    }

    private void log(Level level, Decision decision, Delivery delivery, String detail) {
        if (LOG.isLoggable(level)) {
            Message m = delivery.message();
            LOG.log(level, "decision={0} consumer={1} message_id={2} queue={3} attempt={4}{5}", decision,
                    settings.name(), Printable.id(m.rawId()), m.originQueue(), delivery.attempt(),
                    detail == null ? "" : " detail=\"" + Printable.text(detail, 500) + "\"");
        }
    }
}
