package dev.idemkit.ports.service;

import dev.idemkit.domain.KeyRules;
import dev.idemkit.domain.Message;
import dev.idemkit.domain.MessageId;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.Printable;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.domain.retry.RandomSource;
import dev.idemkit.domain.retry.RetryDecision;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.ConsumerEvents.Decision;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.Guarded;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.ports.out.UnitOfWork;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The consumer loop's decision for one delivery: validate -> inbox (key and effect in one unit of
 * work) -> ack, or retry with backoff, or dead-letter. It never sleeps: a retry is handed to the
 * transport, which keeps the message in the broker while it waits, so other deliveries go on.
 *
 * <p>Every delivery is settled exactly once, whatever happens: a handler's exception becomes a retry
 * or a dead letter, never a lost message. A message without a valid id, with an oversized body, or
 * whose id was reused with a different body is dead-lettered at once with the reason. Thread-safe:
 * the transport may call it from many threads.
 */
public final class ConsumerRuntime<U extends UnitOfWork> implements DeliveryHandler {
    private static final System.Logger LOG = System.getLogger(ConsumerRuntime.class.getName());

    private final ConsumerSettings settings;
    private final InboxStore<U> inbox;
    private final MessageHandler<? super U> handler;
    private final RandomSource random;
    private final Clock clock;
    private final ConsumerEvents events;

    public ConsumerRuntime(ConsumerSettings settings, InboxStore<U> inbox, MessageHandler<? super U> handler,
            RandomSource random, Clock clock, ConsumerEvents events) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.inbox = Objects.requireNonNull(inbox, "inbox");
        this.handler = Objects.requireNonNull(handler, "handler");
        this.random = Objects.requireNonNull(random, "random");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.events = Objects.requireNonNull(events, "events");
    }

    @Override
    public void onDelivery(Delivery delivery) {
        Message message = delivery.message();
        Optional<String> rejection = rejection(message);
        if (rejection.isPresent()) {
            deadLetter(delivery, "non-retryable: " + rejection.get(), rejection.get(), Duration.ZERO);
            return;
        }
        InboxKey key = new InboxKey(settings.name(), new MessageId(message.rawId()));
        long started = System.nanoTime();
        Guarded<Void> result;
        try {
            result = inbox.runOnce(key, message.fingerprint(), work -> {
                handler.handle(message, work);
                return null;
            });
        } catch (Throwable failure) {
            if (failure instanceof VirtualMachineError vme) {
                throw vme;
            }
            onFailure(delivery, failure, Duration.ofNanos(System.nanoTime() - started));
            return;
        }
        Duration latency = Duration.ofNanos(System.nanoTime() - started);
        Outcome outcome = result.outcome();
        if (outcome instanceof Outcome.Rejected rejected) {
            deadLetter(delivery, "non-retryable: " + rejected.reason(), rejected.reason(), latency);
            return;
        }
        delivery.ack();
        Decision decision = outcome.effectRan() ? Decision.PROCESSED
                : outcome instanceof Outcome.Stale ? Decision.STALE : Decision.DUPLICATE;
        log(Level.DEBUG, decision, delivery, null);
        events.onDecision(settings.name(), decision, latency, delivery.message());
    }

    /** Why the message cannot be processed at all (no usable id, too big), or empty. */
    private Optional<String> rejection(Message message) {
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

    private void onFailure(Delivery delivery, Throwable failure, Duration latency) {
        String error = RetryPolicy.describe(failure);
        RetryDecision decision = settings.retryPolicy().decide(delivery.attempt(), failure, random);
        AttemptRecord failed = new AttemptRecord(delivery.attempt(), clock.now(), error);
        if (decision instanceof RetryDecision.RetryAfter retry) {
            delivery.retryAfter(retry.delay(), failed);
            log(Level.WARNING, Decision.RETRIED, delivery, error + "; retry in " + retry.delay().toMillis() + " ms");
            events.onDecision(settings.name(), Decision.RETRIED, latency, delivery.message());
        } else {
            String reason = ((RetryDecision.DeadLetter) decision).reason();
            delivery.deadLetter(reason, failed);
            log(Level.ERROR, Decision.DEAD_LETTERED, delivery, reason);
            events.onDecision(settings.name(), Decision.DEAD_LETTERED, latency, delivery.message());
        }
    }

    private void deadLetter(Delivery delivery, String reason, String error, Duration latency) {
        delivery.deadLetter(reason, new AttemptRecord(delivery.attempt(), clock.now(), error));
        log(Level.ERROR, Decision.DEAD_LETTERED, delivery, reason);
        events.onDecision(settings.name(), Decision.DEAD_LETTERED, latency, delivery.message());
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
