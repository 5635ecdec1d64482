package dev.idemkit.ports.out;

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

    @Override
    public void retryAfter(Duration delay, AttemptRecord failed) {
        delegate.retryAfter(delay, failed);
    }

    @Override
    public void deadLetter(String reason, AttemptRecord failed) {
        delegate.deadLetter(reason, failed);
    }
}
