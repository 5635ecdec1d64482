package dev.idemkit.adapters.postgres;

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
import dev.idemkit.ports.out.StoreUnavailableException;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The inbox on PostgreSQL inside a transaction the CALLER owns ({@link CallerTransaction}): a JDBC connection, a JPA
 * {@code EntityManager} or Spring's current transaction. Same table and same atomic step as
 * {@link PostgresInboxStore}: {@code INSERT INTO processed_messages ... ON CONFLICT DO NOTHING} with the recorded
 * fingerprint read in the same statement, then the effect, all in the caller's transaction (under a savepoint, see
 * {@link Joined}). The key commits when the caller commits and only then; idemkit never commits.
 *
 * <ul>
 *   <li>New key: the effect runs and its value comes back as processed. "Processed" here means "will be kept if the
 *       caller's transaction commits": the caller's rollback takes key and effect back together, and a redelivery
 *       then runs the effect again.</li>
 *   <li>Duplicate or reused id: nothing ran and nothing failed; the caller's transaction is untouched and can go on
 *       and commit. A duplicate never marks it rollback-only.</li>
 *   <li>The effect throws: rolled back to before the key, the exception reaches the caller as it is (checked ones
 *       wrapped in {@code EffectFailedException}).</li>
 *   <li>A concurrent transaction holding the same key uncommitted: this call waits for it (the primary key's lock)
 *       and then sees a duplicate, or inserts the key if that transaction rolled back. At REPEATABLE READ or above,
 *       PostgreSQL answers a key committed after the caller's snapshot with a serialization failure
 *       ({@code StoreUnavailableException}, SQLState 40001): roll back and retry, as for any such failure.</li>
 * </ul>
 *
 * Thread-safe as far as the {@link CallerTransaction} is (a thread-bound one is; a JDBC connection is not shared).
 */
public final class JoinedInboxStore implements InboxStore<JoinedUnitOfWork> {
    private final CallerTransaction tx;

    public JoinedInboxStore(CallerTransaction tx) {
        this.tx = Objects.requireNonNull(tx, "tx");
    }

    @Override
    public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint, Effect<? super JoinedUnitOfWork, R> effect) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(effect, "effect");
        Guarded<R> result = Joined.run(tx, "inbox insert", (c, unit) -> {
            PostgresInboxStore.KeyFound found = PostgresInboxStore.insertOrRead(c, key, fingerprint);
            if (found instanceof PostgresInboxStore.KeyFound.Inserted) {
                return Guarded.processed(Joined.effect(tx, effect, unit));
            }
            Optional<Fingerprint> recorded = found instanceof PostgresInboxStore.KeyFound.Recorded r
                    ? Optional.of(r.fingerprint())
                    // committed by a concurrent transaction after this statement's snapshot: a new statement sees it
                    : PostgresInboxStore.fingerprint(c, key);
            if (recorded.isEmpty()) {
                throw new StoreUnavailableException("inbox key " + key + " conflicted yet vanished (purged"
                        + " concurrently); retry", null);
            }
            return Guarded.<R>of(Inbox.decide(recorded, fingerprint));
        });
        PostgresInboxStore.log(key, result.outcome());
        return result;
    }

    /** Many deliveries in the caller's transaction: one multi-row insert, the effect once with the new ones. */
    @Override
    public List<Outcome> runBatch(List<InboxDelivery> deliveries, BatchEffect<? super JoinedUnitOfWork> effect) {
        Objects.requireNonNull(effect, "effect");
        InboxBatch batch = new InboxBatch(deliveries);
        if (deliveries.isEmpty()) {
            return List.of();
        }
        return Joined.run(tx, "inbox batch insert", (c, unit) -> batch.run(c, fresh -> Joined.effect(tx, work -> {
            effect.run(work, fresh);
            return null;
        }, unit)));
    }

    /** The whole batch goes under one savepoint in the caller's transaction: all of it or none of it. */
    @Override
    public boolean batchesAtomically() {
        return true;
    }

    /** The fingerprint as the caller's transaction sees it (its own uncommitted keys included). */
    @Override
    public Optional<Fingerprint> recorded(InboxKey key) {
        Objects.requireNonNull(key, "key");
        return Joined.run(tx, "inbox read", (c, unit) -> PostgresInboxStore.fingerprint(c, key));
    }

    /** Exactly once for an effect written in the caller's transaction, once the caller commits. */
    @Override
    public Guarantee guarantee() {
        return Guarantee.EXACTLY_ONCE_EFFECT;
    }
}
