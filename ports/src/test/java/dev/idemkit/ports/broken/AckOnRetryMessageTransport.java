package dev.idemkit.ports.broken;

import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.memory.InMemoryMessageTransport;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.forwarding.ForwardingDelivery;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import dev.idemkit.ports.out.DeliveryHandler;
import java.time.Duration;

/**
 * BROKEN on purpose: "retries" by acknowledging, trusting a retry mechanism that is not there, so a
 * message whose handler asked for a retry is lost. Everything else is the in-memory transport.
 */
public final class AckOnRetryMessageTransport implements MessageTransport {
    private final InMemoryMessageTransport transport;

    public AckOnRetryMessageTransport(InMemoryMessageTransport transport) {
        this.transport = transport;
    }

    @Override
    public Subscription subscribe(String queue, DeliveryHandler handler) {
        return transport.subscribe(queue, d -> handler.onDelivery(new Losing(d)));
    }

    @Override
    public void publish(String queue, OutgoingMessage message) {
        transport.publish(queue, message);
    }

    @Override
    public void close() {
        transport.close();
    }

    private static final class Losing extends ForwardingDelivery {
        Losing(Delivery d) {
            super(d);
        }

        @Override
        public void retryAfter(Duration delay, AttemptRecord failed) {
            delegate().ack();
        }
    }
}
