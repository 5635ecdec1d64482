package dev.idemkit.adapters.rabbit;

import dev.idemkit.domain.Message;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.out.Delivery;
import java.util.List;

/** What every AMQP delivery answers alike, from the message as it was {@link Received}; settling is the subclass's. */
abstract class AmqpDelivery implements Delivery {
    protected final Received received;
    private final boolean redelivered;

    AmqpDelivery(Received received, boolean redelivered) {
        this.received = received;
        this.redelivered = redelivered;
    }

    @Override
    public final Message message() {
        return received.message();
    }

    @Override
    public final int attempt() {
        return received.attempt();
    }

    @Override
    public final List<AttemptRecord> history() {
        return received.history();
    }

    @Override
    public final boolean redelivered() {
        return redelivered;
    }
}
