package dev.idemkit.ports.out;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.inbox.InboxKey;
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

    /** The fingerprint recorded for {@code key}, empty when the key has not been processed (or was purged). */
    Optional<Fingerprint> recorded(InboxKey key);

    /** What this store guarantees for an effect written through its unit of work; printed at start-up. */
    Guarantee guarantee();
}
