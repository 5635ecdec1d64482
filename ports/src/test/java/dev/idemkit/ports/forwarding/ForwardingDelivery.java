package dev.idemkit.ports.forwarding;

import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.LogPosition;

import java.util.ArrayList;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import dev.idemkit.domain.Message;
import dev.idemkit.domain.deadletter.AttemptRecord;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * A {@link Delivery} that forwards every call to another one; subclasses override what they observe
 * or change (count settlements, lose an ack on purpose in a test). Thread-safe as the delegate is.
 */
public abstract class ForwardingDelivery implements Delivery {
    private final Delivery delegate;

    protected ForwardingDelivery(Delivery delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    protected final Delivery delegate() {
        return delegate;
    }

    /**
     * The delegate's bulk ack, observed, for a subclass that watches acks (a counter, a crash probe) without costing the
     * transport its bulk ack: one wrapper per transport group, kept in {@code groups} (one map shared by all the
     * wrappers of a subscription, so a batch's group stays whole), which runs {@code before} with the batch, acks the
     * delegates together, then runs {@code after}. Every delivery given to the wrapper must be such a subclass.
     */
    protected final Optional<BulkAck> observedBulkAck(Map<BulkAck, BulkAck> groups,
            Consumer<List<? extends Delivery>> before, Consumer<List<? extends Delivery>> after) {
        return delegate.bulkAck().map(inner -> groups.computeIfAbsent(inner, i -> deliveries -> {
            List<Delivery> delegates = new ArrayList<>(deliveries.size());
            for (Delivery d : deliveries) {
                delegates.add(((ForwardingDelivery) d).delegate);
            }
            before.accept(deliveries);
            try {
                i.ackAll(delegates);
            } finally {
                after.accept(deliveries);
            }
        }));
    }

    @Override
    public Message message() {
        return delegate.message();
    }

    @Override
    public int attempt() {
        return delegate.attempt();
    }

    @Override
    public List<AttemptRecord> history() {
        return delegate.history();
    }

    @Override
    public boolean redelivered() {
        return delegate.redelivered();
    }

    @Override
    public void ack() {
        delegate.ack();
    }

    /** The delegate's position, with the deliveries settled together unwrapped, as the delegate's transport sees them. */
    @Override
    public Optional<LogPosition> positionAfter(List<? extends Delivery> settledTogether) {
        List<Delivery> delegates = new ArrayList<>(settledTogether.size());
        for (Delivery d : settledTogether) {
            delegates.add(d instanceof ForwardingDelivery f ? f.delegate : d);
        }
        return delegate.positionAfter(delegates);
    }

    @Override
    public void retryAfter(Duration delay, AttemptRecord failed) {
        delegate.retryAfter(delay, failed);
    }

    @Override
    public void deadLetter(String reason, AttemptRecord failed) {
        delegate.deadLetter(reason, failed);
    }
}
