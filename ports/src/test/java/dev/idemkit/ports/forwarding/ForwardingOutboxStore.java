package dev.idemkit.ports.forwarding;

import dev.idemkit.ports.out.OutboxEntry;
import dev.idemkit.ports.out.OutboxStore;

import dev.idemkit.domain.deadletter.Approval;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * An {@link OutboxStore} that forwards every call to another one; subclasses override what they observe or change
 * (poll instead of waiting for notifications, a deliberately broken order in a crash test). Thread-safe as the
 * delegate is.
 */
public abstract class ForwardingOutboxStore implements OutboxStore {
    private final OutboxStore delegate;

    protected ForwardingOutboxStore(OutboxStore delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    protected final OutboxStore delegate() {
        return delegate;
    }

    @Override
    public int relay(int max, Instant now, Publisher publisher) {
        return delegate.relay(max, now, publisher);
    }

    @Override
    public int relay(int first, int max, Instant now, StreamingPublisher publisher) {
        return delegate.relay(first, max, now, publisher);
    }

    @Override
    public void awaitAppend(Duration max) throws InterruptedException {
        delegate.awaitAppend(max);
    }

    @Override
    public List<OutboxEntry> parked(int max) {
        return delegate.parked(max);
    }

    @Override
    public List<OutboxEntry> unsent(int max) {
        return delegate.unsent(max);
    }

    @Override
    public Optional<OutboxEntry> find(String id) {
        return delegate.find(id);
    }

    @Override
    public boolean redrive(String id, Approval approval) {
        return delegate.redrive(id, approval);
    }

    @Override
    public boolean discard(String id, Approval approval) {
        return delegate.discard(id, approval);
    }

    @Override
    public Stats stats(Instant now) {
        return delegate.stats(now);
    }

    @Override
    public long purgeSent(Instant before, int batch, int maxBatches) {
        return delegate.purgeSent(before, batch, maxBatches);
    }
}
