package dev.idemkit.adapters.postgres;

import dev.idemkit.ports.contract.EffectCounter;
import dev.idemkit.ports.contract.IdempotentRequestsContract;
import dev.idemkit.ports.contract.InboxStoreContract;
import dev.idemkit.ports.contract.UpsertStoreContract;
import dev.idemkit.ports.contract.VersionedStoreContract;
import dev.idemkit.ports.out.IdempotencyClaims;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.ports.out.UpsertStore;
import dev.idemkit.ports.out.VersionedStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;

/**
 * The inbox, Idempotency-Key, versioned and upsert contracts, unchanged, against the JOINED stores: each call inside a JDBC transaction
 * that the test (the caller) opens and commits, never idemkit. Same laws as the self-managed stores: the model's
 * outcomes on random schedules, one effect for racing deliveries, a failing effect keeping nothing.
 */
class JoinedStoresContractIT {
    private static TestDatabase pg;
    private static CallerHarness caller;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start(20);
        caller = new CallerHarness(pg);
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    @Nested
    class Inbox extends InboxStoreContract<JoinedUnitOfWork> {
        @Override
        protected InboxStore<JoinedUnitOfWork> store() {
            return caller.inbox(new JoinedInboxStore(caller.tx()));
        }

        @Override
        protected EffectCounter<JoinedUnitOfWork> counter() {
            return caller.counter();
        }
    }

    @Nested
    class IdempotentRequests extends IdempotentRequestsContract<JoinedUnitOfWork> {
        @Override
        protected IdempotencyClaims<JoinedUnitOfWork> claims() {
            return caller.claims(new JoinedIdempotencyClaims(caller.tx()));
        }

        @Override
        protected void recordEffect(JoinedUnitOfWork work, String tag) throws Exception {
            CallerHarness.credit(work.connection(), tag, 1);
        }

        @Override
        protected long keptEffects(String tag) {
            return caller.counter().read(tag);
        }

        @Override
        protected boolean effectSharesTheClaimsTransaction() {
            return true;
        }

        /** Each waiting attempt holds a pooled connection (a row lock): the pool (20) has room for these and more. */
        @Override
        protected int parallelism() {
            return 12;
        }
    }

    @Nested
    class Versioned extends VersionedStoreContract<JoinedUnitOfWork> {
        @Override
        protected VersionedStore<Long, JoinedUnitOfWork> store() {
            return caller.versioned(new JoinedVersionedStore<>(caller.tx(), ProductPrice.table()));
        }

        @Override
        protected EffectCounter<JoinedUnitOfWork> counter() {
            return caller.counter();
        }
    }

    @Nested
    class Upsert extends UpsertStoreContract<JoinedUnitOfWork> {
        @Override
        protected UpsertStore<String, JoinedUnitOfWork> store() {
            return caller.upsert(new JoinedUpsertStore<>(caller.tx(), Shipment.table()));
        }

        @Override
        protected EffectCounter<JoinedUnitOfWork> counter() {
            return caller.counter();
        }
    }
}
