package dev.idemkit.ports.memory;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.Inbox;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.BatchEffect;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.Guarantee;
import dev.idemkit.ports.out.Guarded;
import dev.idemkit.ports.out.InboxStore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The reference inbox. Atomic step: under the store's one lock, {@code Inbox.decide} on the recorded
 * fingerprint, then the effect, then the key and the effect's staged writes together — or nothing when
 * the effect throws. Effects run one at a time, like a database with one connection. Thread-safe.
 */
public final class InMemoryInboxStore implements InboxStore<InMemoryUnitOfWork> {
    private final Object lock = new Object();
    private final Map<InboxKey, Fingerprint> recorded = new HashMap<>();

    @Override
    public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint, Effect<? super InMemoryUnitOfWork, R> effect) {
        synchronized (lock) {
            Outcome outcome = Inbox.decide(Optional.ofNullable(recorded.get(key)), fingerprint);
            if (!outcome.effectRan()) {
                return Guarded.of(outcome);
            }
            return Guarded.processed(InMemoryUnitOfWork.transact(effect, () -> recorded.put(key, fingerprint)));
        }
    }

    /** The whole batch under the lock: keys and staged writes kept together, or nothing when the effect throws. */
    @Override
    public List<Outcome> runBatch(List<InboxDelivery> deliveries, BatchEffect<? super InMemoryUnitOfWork> effect) {
        synchronized (lock) {
            Map<InboxKey, Fingerprint> added = new LinkedHashMap<>();
            List<Outcome> outcomes = new ArrayList<>();
            List<InboxDelivery> fresh = new ArrayList<>();
            for (InboxDelivery d : deliveries) {
                Fingerprint known = added.containsKey(d.key()) ? added.get(d.key()) : recorded.get(d.key());
                Outcome outcome = Inbox.decide(Optional.ofNullable(known), d.fingerprint());
                if (outcome.effectRan()) {
                    added.put(d.key(), d.fingerprint());
                    fresh.add(d);
                }
                outcomes.add(outcome);
            }
            if (!fresh.isEmpty()) {
                InMemoryUnitOfWork.transact(work -> {
                    effect.run(work, List.copyOf(fresh));
                    return null;
                }, () -> recorded.putAll(added));
            }
            return outcomes;
        }
    }

    @Override
    public boolean batchesAtomically() {
        return true;
    }

    @Override
    public Optional<Fingerprint> recorded(InboxKey key) {
        synchronized (lock) {
            return Optional.ofNullable(recorded.get(key));
        }
    }

    /** Memory forgets on restart. */
    @Override
    public Guarantee guarantee() {
        return Guarantee.EXACTLY_ONCE_WITHIN_STORE_DURABILITY;
    }
}
