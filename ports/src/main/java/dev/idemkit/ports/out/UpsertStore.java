package dev.idemkit.ports.out;

import dev.idemkit.domain.NaturalKey;
import dev.idemkit.domain.Outcome;
import java.util.Optional;

/**
 * Creation by natural key: the first insert of a key wins, later ones are duplicates.
 *
 * <p>Atomic step: an insert-if-absent ({@code INSERT ... ON CONFLICT (key) DO NOTHING}) whose
 * affected-row count is the decision; {@code onInserted} runs in the same unit of work only when the
 * row was inserted. Thread-safe.
 */
public interface UpsertStore<T, U extends UnitOfWork> {

    /**
     * @return processed when inserted, duplicate when the key was present
     * @throws StoreUnavailableException when the store failed; nothing was committed
     */
    Outcome insertIfAbsent(NaturalKey key, T value, Effect<? super U, ?> onInserted);

    default Outcome insertIfAbsent(NaturalKey key, T value) {
        return insertIfAbsent(key, value, work -> null);
    }

    Optional<T> find(NaturalKey key);
}
