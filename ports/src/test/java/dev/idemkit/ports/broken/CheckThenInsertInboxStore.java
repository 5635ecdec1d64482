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
 * BROKEN on purpose (Camel's count-then-insert): reads the key, then runs the effect and inserts,
 * without one atomic step. A {@link CheckActWindow} between check and insert makes the race show reliably.
 * Sequentially it behaves; concurrent deliveries of one key all run the effect.
 */
public final class CheckThenInsertInboxStore implements InboxStore<InMemoryUnitOfWork> {
    private final Map<InboxKey, Fingerprint> recorded = new ConcurrentHashMap<>();
    private final CheckActWindow window = new CheckActWindow();

    @Override
    public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint, Effect<? super InMemoryUnitOfWork, R> effect) {
        Outcome outcome = Inbox.decide(Optional.ofNullable(recorded.get(key)), fingerprint);
        if (!outcome.effectRan()) {
            return Guarded.of(outcome);
        }
        window.afterCheck(key); // the window every check-then-act has, widened
        return Guarded.processed(InMemoryUnitOfWork.transact(effect, () -> recorded.put(key, fingerprint)));
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
