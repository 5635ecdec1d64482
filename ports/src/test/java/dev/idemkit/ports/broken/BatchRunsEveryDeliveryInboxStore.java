package dev.idemkit.ports.broken;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.memory.InMemoryInboxStore;
import dev.idemkit.ports.memory.InMemoryUnitOfWork;
import dev.idemkit.ports.out.BatchEffect;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.Guarantee;
import dev.idemkit.ports.out.Guarded;
import dev.idemkit.ports.out.InboxStore;
import java.util.List;
import java.util.Optional;

/**
 * BROKEN on purpose: its batches decide every delivery right but hand the effect the WHOLE batch, duplicates and
 * reused ids included, instead of the new keys only. One delivery at a time it is the reference inbox.
 */
public final class BatchRunsEveryDeliveryInboxStore implements InboxStore<InMemoryUnitOfWork> {
    private final InMemoryInboxStore delegate = new InMemoryInboxStore();

    @Override
    public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint, Effect<? super InMemoryUnitOfWork, R> effect) {
        return delegate.runOnce(key, fingerprint, effect);
    }

    @Override
    public List<Outcome> runBatch(List<InboxDelivery> deliveries, BatchEffect<? super InMemoryUnitOfWork> effect) {
        return delegate.runBatch(deliveries, (work, fresh) -> effect.run(work, deliveries));
    }

    @Override
    public boolean batchesAtomically() {
        return true;
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
