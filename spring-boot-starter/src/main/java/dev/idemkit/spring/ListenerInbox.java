package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.JoinedInboxStore;
import dev.idemkit.adapters.postgres.JoinedUnitOfWork;
import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.Guarantee;
import dev.idemkit.ports.out.Guarded;
import dev.idemkit.ports.out.InboxStore;
import java.util.Objects;
import java.util.Optional;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The inbox of the idempotent listeners: each key and its listener's effect in a Spring transaction of their own (the
 * service's transaction manager), which the delivery flow runs as the store's atomic step. The key commits with
 * everything the listener wrote through that transaction; a listener that throws, or leaves the transaction
 * rollback-only, keeps nothing (the commit's {@code UnexpectedRollbackException} is the attempt's failure).
 */
final class ListenerInbox implements InboxStore<JoinedUnitOfWork> {
    private final JoinedInboxStore store;
    private final TransactionTemplate transactions;

    ListenerInbox(JoinedInboxStore store, TransactionTemplate transactions) {
        this.store = Objects.requireNonNull(store, "store");
        this.transactions = Objects.requireNonNull(transactions, "transactions");
    }

    @Override
    public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint, Effect<? super JoinedUnitOfWork, R> effect) {
        return transactions.execute(status -> store.runOnce(key, fingerprint, effect));
    }

    @Override
    public Optional<Fingerprint> recorded(InboxKey key) {
        return transactions.execute(status -> store.recorded(key));
    }

    @Override
    public Guarantee guarantee() {
        return store.guarantee();
    }
}
