package dev.idemkit.ports.broken;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.Inbox;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.memory.InMemoryUnitOfWork;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.Guarantee;
import dev.idemkit.ports.out.Guarded;
import dev.idemkit.ports.out.InboxStore;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * BROKEN on purpose: records the key atomically, but BEFORE and outside the effect's unit of work
 * (a "mark as seen" in one transaction, the effect in another). Races are decided correctly, but an
 * effect that fails leaves its key behind, so the retry is taken for a duplicate and the effect is lost.
 */
public final class RecordOutsideUnitOfWorkInboxStore implements InboxStore<InMemoryUnitOfWork> {
    private final Map<InboxKey, Fingerprint> recorded = new ConcurrentHashMap<>();

    @Override
    public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint, Effect<? super InMemoryUnitOfWork, R> effect) {
        Outcome outcome = Inbox.decide(Optional.ofNullable(recorded.putIfAbsent(key, fingerprint)), fingerprint);
        if (!outcome.effectRan()) {
            return Guarded.of(outcome);
        }
        return Guarded.processed(InMemoryUnitOfWork.transact(effect, () -> { }));
    }

    @Override
    public Optional<Fingerprint> recorded(InboxKey key) {
        return Optional.ofNullable(recorded.get(key));
    }

    @Override
    public Guarantee guarantee() {
        return Guarantee.DUPLICATES_REDUCED;
    }
}
