package dev.idemkit.ports.service;

import dev.idemkit.domain.retry.RandomSource;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.ConsumerEvents.Observation;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.ports.out.UnitOfWork;
import java.util.Objects;

/**
 * The single-message consumer: a transport's deliveries through the {@link DeliveryFlow} (validate -> inbox, key and
 * effect in one unit of work -> ack, or retry with backoff, or dead-letter). It never sleeps: a retry is handed to the
 * transport, which keeps the message in the broker while it waits, so other deliveries go on.
 *
 * <p>Every delivery is settled exactly once, whatever happens: a handler's exception becomes a retry or a dead letter,
 * never a lost message. A message without a valid id, with an oversized body, or whose id was reused with a different
 * body is dead-lettered at once with the reason. Thread-safe: the transport may call it from many threads.
 */
public final class ConsumerRuntime<U extends UnitOfWork> implements DeliveryHandler {
    private final DeliveryFlow flow;
    private final InboxStore<U> inbox;
    private final MessageHandler<? super U> handler;

    public ConsumerRuntime(ConsumerSettings settings, InboxStore<U> inbox, MessageHandler<? super U> handler,
            RandomSource random, Clock clock, ConsumerEvents events) {
        this(new DeliveryFlow(settings, random, clock, events), inbox, handler);
    }

    /** {@code inbox} and {@code handler} through {@code flow}. */
    public ConsumerRuntime(DeliveryFlow flow, InboxStore<U> inbox, MessageHandler<? super U> handler) {
        this.flow = Objects.requireNonNull(flow, "flow");
        this.inbox = Objects.requireNonNull(inbox, "inbox");
        this.handler = Objects.requireNonNull(handler, "handler");
    }

    @Override
    public void onDelivery(Delivery delivery) {
        flow.run(delivery, inbox, handler);
    }

    /** The same for a delivery whose observation was started already (the batched consumer's hand-over). */
    void onDelivery(Delivery delivery, Observation observation) {
        flow.run(delivery, observation, inbox, handler);
    }
}
