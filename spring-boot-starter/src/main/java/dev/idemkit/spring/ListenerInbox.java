package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.JoinedInboxStore;
import dev.idemkit.adapters.postgres.JoinedUnitOfWork;
import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.ports.out.BatchEffect;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.Guarantee;
import dev.idemkit.ports.out.Guarded;
import dev.idemkit.ports.out.InboxStore;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The inbox of the idempotent listeners: each key and its listener's effect in a Spring transaction of their own (the
 * service's transaction manager), which the delivery flow runs as the store's atomic step. The key commits with
 * everything the listener wrote through that transaction; a listener that throws, or leaves the transaction
 * rollback-only, keeps nothing (the commit's {@code UnexpectedRollbackException} is the attempt's failure). A batch
 * listener's batch: every key and the listener's effect for the new ones in one such transaction.
 */
final class ListenerInbox implements InboxStore<JoinedUnitOfWork> {
    private final JoinedInboxStore store;
    private final TransactionTemplate transactions;

    /**
     * Each call in a NEW transaction of {@code transactionManager} ({@code REQUIRES_NEW}: its key and effect commit
     * before the container acks, whatever surrounds the listener), rolled back whole when the call throws, so the
     * store sets no savepoint in it ({@link SpringCallerTransaction#perDelivery}).
     */
    ListenerInbox(DataSource dataSource, PlatformTransactionManager transactionManager) {
        this.store = new JoinedInboxStore(SpringCallerTransaction.perDelivery(dataSource));
        this.transactions = new TransactionTemplate(Objects.requireNonNull(transactionManager, "transactionManager"));
        this.transactions.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
    }

    @Override
    public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint, Effect<? super JoinedUnitOfWork, R> effect) {
        return transactions.execute(status -> store.runOnce(key, fingerprint, effect));
    }

    /** A batch's keys and its listener's effect for the new ones in ONE Spring transaction: all of it or none. */
    @Override
    public List<Outcome> runBatch(List<InboxDelivery> deliveries, BatchEffect<? super JoinedUnitOfWork> effect) {
        return transactions.execute(status -> store.runBatch(deliveries, effect));
    }

    @Override
    public boolean batchesAtomically() {
        return true;
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
