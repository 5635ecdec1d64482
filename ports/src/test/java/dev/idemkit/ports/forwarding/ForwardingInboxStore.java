package dev.idemkit.ports.forwarding;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.BatchEffect;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.Guarantee;
import dev.idemkit.ports.out.Guarded;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.ports.out.LogPosition;
import dev.idemkit.ports.out.LogPositions;
import dev.idemkit.ports.out.UnitOfWork;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * An {@link InboxStore} that forwards every call to another one; subclasses override what they observe or hold (a
 * test that waits before an attempt takes the store, one that fails a batch). Thread-safe as the delegate is.
 */
public abstract class ForwardingInboxStore<U extends UnitOfWork> implements InboxStore<U> {
    private final InboxStore<U> delegate;

    protected ForwardingInboxStore(InboxStore<U> delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    protected final InboxStore<U> delegate() {
        return delegate;
    }

    @Override
    public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint, Effect<? super U, R> effect) {
        return delegate.runOnce(key, fingerprint, effect);
    }

    @Override
    public List<Outcome> runBatch(List<InboxDelivery> deliveries, BatchEffect<? super U> effect) {
        return delegate.runBatch(deliveries, effect);
    }

    /** Without positions through {@link #runOnce(InboxKey, Fingerprint, Effect)}, which a subclass may override. */
    @Override
    public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint, List<LogPosition> positions,
            Effect<? super U, R> effect) {
        return positions.isEmpty() ? runOnce(key, fingerprint, effect)
                : delegate.runOnce(key, fingerprint, positions, effect);
    }

    /** Without positions through {@link #runBatch(List, BatchEffect)}, which a subclass may override. */
    @Override
    public List<Outcome> runBatch(List<InboxDelivery> deliveries, List<LogPosition> positions,
            BatchEffect<? super U> effect) {
        return positions.isEmpty() ? runBatch(deliveries, effect) : delegate.runBatch(deliveries, positions, effect);
    }

    @Override
    public boolean keepsPositions() {
        return delegate.keepsPositions();
    }

    @Override
    public LogPositions positions() {
        return delegate.positions();
    }

    @Override
    public boolean batchesAtomically() {
        return delegate.batchesAtomically();
    }

    @Override
    public Optional<Fingerprint> recorded(InboxKey key) {
        return delegate.recorded(key);
    }

    @Override
    public Guarantee guarantee() {
        return delegate.guarantee();
    }
}
