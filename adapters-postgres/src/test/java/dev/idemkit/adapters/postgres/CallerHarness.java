package dev.idemkit.adapters.postgres;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.NaturalKey;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.domain.versioned.VersionedEvent;
import dev.idemkit.domain.versioned.VersionedValue;
import dev.idemkit.ports.contract.EffectCounter;
import dev.idemkit.ports.out.BatchEffect;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.Guarantee;
import dev.idemkit.ports.out.Guarded;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.out.IdempotencyClaims;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.ports.out.UpsertStore;
import dev.idemkit.ports.out.VersionedStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The caller of the joined stores in their contract suites: every call runs in a JDBC transaction that the harness,
 * not idemkit, opens on the test pool and commits (rolls back when the call throws), with the connection bound to the
 * calling thread the way Spring binds its transaction's. The stores under test only ever see {@link #tx()}.
 */
final class CallerHarness {
    private final TestDatabase pg;
    private final ThreadLocal<Connection> current = new ThreadLocal<>();

    CallerHarness(TestDatabase pg) {
        this.pg = pg;
    }

    /** The caller's transaction on this thread; none outside {@link #inTransaction}. */
    CallerTransaction tx() {
        return () -> {
            Connection c = current.get();
            if (c == null) {
                throw new IllegalStateException("no caller transaction on this thread");
            }
            return c;
        };
    }

    <R> R inTransaction(Supplier<R> call) {
        try (Connection c = pg.connection()) {
            current.set(c);
            try {
                R r = call.get();
                c.commit();
                return r;
            } catch (RuntimeException | Error e) {
                c.rollback();
                throw e;
            } finally {
                current.remove();
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    InboxStore<JoinedUnitOfWork> inbox(JoinedInboxStore store) {
        return new InboxStore<>() {
            @Override
            public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint,
                    Effect<? super JoinedUnitOfWork, R> effect) {
                return inTransaction(() -> store.runOnce(key, fingerprint, effect));
            }

            @Override
            public List<Outcome> runBatch(List<InboxDelivery> deliveries, BatchEffect<? super JoinedUnitOfWork> effect) {
                return inTransaction(() -> store.runBatch(deliveries, effect));
            }

            @Override
            public boolean batchesAtomically() {
                return store.batchesAtomically();
            }

            @Override
            public Optional<Fingerprint> recorded(InboxKey key) {
                return inTransaction(() -> store.recorded(key));
            }

            @Override
            public Guarantee guarantee() {
                return store.guarantee();
            }
        };
    }

    <T> VersionedStore<T, JoinedUnitOfWork> versioned(JoinedVersionedStore<T> store) {
        return new VersionedStore<>() {
            @Override
            public Outcome apply(VersionedEvent<T> event, Effect<? super JoinedUnitOfWork, ?> onApplied) {
                return inTransaction(() -> store.apply(event, onApplied));
            }

            @Override
            public Optional<VersionedValue<T>> current(String aggregateId) {
                return inTransaction(() -> store.current(aggregateId));
            }
        };
    }

    <T> UpsertStore<T, JoinedUnitOfWork> upsert(JoinedUpsertStore<T> store) {
        return new UpsertStore<>() {
            @Override
            public Outcome insertIfAbsent(NaturalKey key, T value, Effect<? super JoinedUnitOfWork, ?> onInserted) {
                return inTransaction(() -> store.insertIfAbsent(key, value, onInserted));
            }

            @Override
            public Optional<T> find(NaturalKey key) {
                return inTransaction(() -> store.find(key));
            }
        };
    }

    /** Each attempt in a transaction of its own, as the flow requires of a caller (the starter's filter does the same). */
    IdempotencyClaims<JoinedUnitOfWork> claims(JoinedIdempotencyClaims claims) {
        return new IdempotencyClaims<>() {
            @Override
            public Attempt attempt(ScopedKey key, Fingerprint fingerprint, KeyPolicy policy, Duration wait,
                    Effect<? super JoinedUnitOfWork, StoredResponse> effect) {
                return inTransaction(() -> claims.attempt(key, fingerprint, policy, wait, effect));
            }

            @Override
            public StoredResponse runWithoutKey(Effect<? super JoinedUnitOfWork, StoredResponse> effect) {
                return inTransaction(() -> claims.runWithoutKey(effect));
            }

            @Override
            public Optional<KeyRecord> find(ScopedKey key) {
                return inTransaction(() -> claims.find(key));
            }
        };
    }

    /** The suites' non-idempotent effect, written with plain JDBC on the caller's connection. */
    EffectCounter<JoinedUnitOfWork> counter() {
        return new EffectCounter<>() {
            @Override
            public void add(JoinedUnitOfWork work, String name, long amount) throws SQLException {
                credit(work.connection(), name, amount);
            }

            @Override
            public long read(String name) {
                return pg.queryLong("SELECT coalesce(sum(balance), 0) FROM accounts WHERE id = ?", name);
            }
        };
    }

    static void credit(Connection c, String account, long amount) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                INSERT INTO accounts (id, balance) VALUES (?, ?)
                ON CONFLICT (id) DO UPDATE SET balance = accounts.balance + excluded.balance
                """)) {
            ps.setString(1, account);
            ps.setLong(2, amount);
            ps.executeUpdate();
        }
    }
}
