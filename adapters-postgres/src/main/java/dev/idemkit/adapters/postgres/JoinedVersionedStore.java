package dev.idemkit.adapters.postgres;

import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.versioned.VersionedEvent;
import dev.idemkit.domain.versioned.VersionedValue;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.VersionedStore;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Versioned state in a user's table inside a transaction the CALLER owns: the same atomic step as
 * {@link PostgresVersionedStore} ({@code INSERT ... ON CONFLICT (id) DO UPDATE ... WHERE t.version < excluded.version}),
 * run under a savepoint in the caller's transaction ({@link Joined}); the write commits when the caller commits. A
 * duplicate or a stale event writes nothing and leaves the caller's transaction as it was.
 */
public final class JoinedVersionedStore<T> implements VersionedStore<T, JoinedUnitOfWork> {
    private static final Logger LOG = LoggerFactory.getLogger(JoinedVersionedStore.class);

    private final CallerTransaction tx;
    private final VersionedStatements<T> sql;

    public JoinedVersionedStore(CallerTransaction tx, VersionedTable<T> table) {
        this.tx = Objects.requireNonNull(tx, "tx");
        this.sql = new VersionedStatements<>(table);
    }

    @Override
    public Outcome apply(VersionedEvent<T> event, Effect<? super JoinedUnitOfWork, ?> onApplied) {
        Objects.requireNonNull(event, "event");
        Objects.requireNonNull(onApplied, "onApplied");
        Outcome outcome = Joined.run(tx, "versioned write",
                (c, unit) -> sql.apply(c, event, () -> Joined.effect(tx, onApplied, unit)));
        sql.log(LOG, event, outcome);
        return outcome;
    }

    /** The current value as the caller's transaction sees it. */
    @Override
    public Optional<VersionedValue<T>> current(String aggregateId) {
        Objects.requireNonNull(aggregateId, "aggregateId");
        return Joined.run(tx, "versioned read", (c, unit) -> sql.current(c, aggregateId));
    }
}
