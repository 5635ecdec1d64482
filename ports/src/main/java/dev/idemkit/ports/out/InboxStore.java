package dev.idemkit.ports.out;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The inbox: records (consumer, message id) and runs the effect in ONE unit of work.
 *
 * <p>Atomic step: an insert-if-absent of the key that a unique constraint (or an equivalent atomic
 * primitive) decides — never a read followed by a write. When several callers race on one key,
 * exactly one runs the effect; the others see a duplicate. When the effect throws, the key is not
 * kept either, so a retry runs the effect again. Implementations are thread-safe.
 *
 * @param <U> the unit of work the effect receives
 */
public interface InboxStore<U extends UnitOfWork> {

    /**
     * Runs {@code effect} once per key.
     *
     * @return processed with the effect's value when this call ran it and committed; duplicate when the
     *     key was already recorded with the same fingerprint; rejected ({@code Inbox.REUSED_ID}) when
     *     it was recorded with a different fingerprint. The decision is {@code Inbox.decide}.
     * @throws RuntimeException the effect's own exception (checked ones wrapped in
     *     {@link EffectFailedException}); nothing was committed
     * @throws StoreUnavailableException when the store failed; nothing was committed
     */
    <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint, Effect<? super U, R> effect);

    /**
     * Many deliveries at once: records the keys that are new and runs {@code effect} with them (the first occurrence
     * of each key), then commits. One outcome per delivery, in input order, as {@link #runOnce} in that order would
     * decide them: processed for the first occurrence of a new key, duplicate for a key recorded (before, or earlier
     * in the batch) with the same fingerprint, rejected for another fingerprint.
     *
     * <p>A store that {@link #batchesAtomically()} does it in ONE unit of work: the effect throwing keeps nothing,
     * no key included. This default runs the deliveries one by one through {@link #runOnce}, each in its own unit of
     * work: when one throws, those before it stay committed and the exception propagates (a caller that then settles
     * each delivery on its own finds those as duplicates).
     *
     * @throws RuntimeException the effect's own exception (checked ones wrapped in {@link EffectFailedException})
     * @throws StoreUnavailableException when the store failed
     */
    default List<Outcome> runBatch(List<InboxDelivery> deliveries, BatchEffect<? super U> effect) {
        List<Outcome> outcomes = new ArrayList<>(deliveries.size());
        for (InboxDelivery d : deliveries) {
            outcomes.add(runOnce(d.key(), d.fingerprint(), work -> {
                effect.run(work, List.of(d));
                return null;
            }).outcome());
        }
        return outcomes;
    }

    /** Whether {@link #runBatch} keeps a whole batch or nothing (one unit of work), or goes delivery by delivery. */
    default boolean batchesAtomically() {
        return false;
    }

    /**
     * Whether this store writes {@link LogPosition}s in the unit of work of {@link #runOnce(InboxKey, Fingerprint,
     * List, Effect)} and {@link #runBatch(List, List, BatchEffect)}, and reads them back ({@link #positions}).
     */
    default boolean keepsPositions() {
        return false;
    }

    /** Where the positions this store keeps are read; only for a store that {@link #keepsPositions}. */
    default LogPositions positions() {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " keeps no log positions");
    }

    /**
     * {@link #runOnce(InboxKey, Fingerprint, Effect)}, and in the same unit of work the {@code positions} (those a
     * delivery reports for itself: {@link Delivery#positionsAfter}) when the outcome is one the caller acknowledges
     * (processed, duplicate, stale), never when it is rejected (that delivery is dead-lettered after the commit: a
     * position past it would lose it in a crash in between). A stored position never moves back within one log.
     * A store that does not {@link #keepsPositions} ignores them (the default): writing no position is always safe,
     * the consumer's own commits cover the same records later.
     */
    default <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint, List<LogPosition> positions,
            Effect<? super U, R> effect) {
        return runOnce(key, fingerprint, effect);
    }

    /**
     * {@link #runBatch(List, BatchEffect)}, and in the same unit of work the {@code positions} when no outcome is
     * rejected; a store that does not {@link #keepsPositions} (or does not {@link #batchesAtomically}) ignores them.
     */
    default List<Outcome> runBatch(List<InboxDelivery> deliveries, List<LogPosition> positions,
            BatchEffect<? super U> effect) {
        return runBatch(deliveries, effect);
    }

    /** The fingerprint recorded for {@code key}, empty when the key has not been processed (or was purged). */
    Optional<Fingerprint> recorded(InboxKey key);

    /** What this store guarantees for an effect written through its unit of work; printed at start-up. */
    Guarantee guarantee();
}
