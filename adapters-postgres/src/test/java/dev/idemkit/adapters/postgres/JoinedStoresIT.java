package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.Inbox;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.Guarded;
import dev.idemkit.ports.out.StoreUnavailableException;
import jakarta.persistence.EntityManager;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The joined stores inside transactions the test owns: the key's fate is the caller's commit, a duplicate leaves the
 * caller's transaction usable, a failing effect leaves nothing even when the caller catches it and commits, and no
 * transaction is a clear error, never an auto-commit.
 */
class JoinedStoresIT {
    private static TestDatabase pg;
    private static Accounts accounts;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start(8);
        accounts = new Accounts(pg);
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    private static String fresh(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    private static long keys(String consumer) {
        return pg.queryLong("SELECT count(*) FROM processed_messages WHERE consumer = ?", consumer);
    }

    @Test
    void keyAndEffectCommitWithTheCallersCommitAndNotBefore() throws SQLException {
        String consumer = fresh("c");
        String account = fresh("acc");
        try (Connection c = pg.connection()) {
            JoinedInboxStore inbox = new JoinedInboxStore(CallerTransaction.jdbc(c));
            Guarded<String> r = inbox.runOnce(InboxKey.of(consumer, "m-1"), Fingerprint.of("body"), work -> {
                CallerHarness.credit(work.connection(), account, 10);
                return "done";
            });
            assertThat(r.outcome()).isEqualTo(Outcome.PROCESSED);
            assertThat(r.value()).contains("done");
            assertThat(keys(consumer)).as("nothing visible before the caller commits").isZero();
            assertThat(accounts.balance(account)).isZero();
            c.commit();
        }
        assertThat(keys(consumer)).isEqualTo(1);
        assertThat(accounts.balance(account)).isEqualTo(10);
    }

    @Test
    void theCallersRollbackTakesKeyAndEffectBackAndTheRedeliveryRunsOnce() throws SQLException {
        String consumer = fresh("c");
        String account = fresh("acc");
        InboxKey key = InboxKey.of(consumer, "m-1");
        try (Connection c = pg.connection()) {
            new JoinedInboxStore(CallerTransaction.jdbc(c)).runOnce(key, Fingerprint.of("body"), work -> {
                CallerHarness.credit(work.connection(), account, 10);
                return null;
            });
            c.rollback();
        }
        assertThat(keys(consumer)).isZero();
        assertThat(accounts.balance(account)).isZero();
        for (int i = 0; i < 3; i++) {
            try (Connection c = pg.connection()) {
                new JoinedInboxStore(CallerTransaction.jdbc(c)).runOnce(key, Fingerprint.of("body"), work -> {
                    CallerHarness.credit(work.connection(), account, 10);
                    return null;
                });
                c.commit();
            }
        }
        assertThat(accounts.balance(account)).isEqualTo(10);
    }

    @Test
    void aDuplicateLeavesTheCallersTransactionUsableAndItsOwnWorkCommits() throws SQLException {
        String consumer = fresh("c");
        String account = fresh("acc");
        String other = fresh("acc");
        InboxKey key = InboxKey.of(consumer, "m-1");
        try (Connection c = pg.connection()) {
            new JoinedInboxStore(CallerTransaction.jdbc(c)).runOnce(key, Fingerprint.of("body"), work -> null);
            c.commit();
        }
        try (Connection c = pg.connection()) {
            JoinedInboxStore inbox = new JoinedInboxStore(CallerTransaction.jdbc(c));
            CallerHarness.credit(c, other, 5); // the caller's own work before the call
            Guarded<Object> dup = inbox.runOnce(key, Fingerprint.of("body"), work -> {
                throw new AssertionError("a duplicate ran its effect");
            });
            Guarded<Object> reused = inbox.runOnce(key, Fingerprint.of("another body"), work -> {
                throw new AssertionError("a reused id ran its effect");
            });
            assertThat(dup.outcome()).isEqualTo(Outcome.DUPLICATE);
            assertThat(reused.outcome()).isEqualTo(Outcome.rejected(Inbox.REUSED_ID));
            CallerHarness.credit(c, account, 7); // and after it: the transaction was not aborted
            assertThat(Sql.aborted(c)).isFalse();
            c.commit();
        }
        assertThat(accounts.balance(other)).isEqualTo(5);
        assertThat(accounts.balance(account)).isEqualTo(7);
    }

    @Test
    void aFailingEffectLeavesNothingEvenWhenTheCallerCatchesItAndCommits() throws SQLException {
        String consumer = fresh("c");
        String account = fresh("acc");
        String before = fresh("acc");
        try (Connection c = pg.connection()) {
            CallerHarness.credit(c, before, 3);
            JoinedInboxStore inbox = new JoinedInboxStore(CallerTransaction.jdbc(c));
            assertThatThrownBy(() -> inbox.runOnce(InboxKey.of(consumer, "m-1"), Fingerprint.of("b"), work -> {
                CallerHarness.credit(work.connection(), account, 10);
                throw new IllegalStateException("boom after the credit");
            })).isInstanceOf(IllegalStateException.class).hasMessage("boom after the credit");
            c.commit(); // a caller that swallowed the failure
        }
        assertThat(keys(consumer)).as("key").isZero();
        assertThat(accounts.balance(account)).as("the effect's credit").isZero();
        assertThat(accounts.balance(before)).as("the caller's own earlier work").isEqualTo(3);
    }

    @Test
    void anEffectThatSwallowsAnSqlErrorFailsInsteadOfReportingProcessed() throws SQLException {
        String consumer = fresh("c");
        try (Connection c = pg.connection()) {
            JoinedInboxStore inbox = new JoinedInboxStore(CallerTransaction.jdbc(c));
            assertThatThrownBy(() -> inbox.runOnce(InboxKey.of(consumer, "m-1"), Fingerprint.of("b"), work -> {
                try (Statement s = work.connection().createStatement()) {
                    s.execute("SELECT 1/0");
                } catch (SQLException swallowed) {
                    // the transaction is aborted now
                }
                return null;
            })).as("the effect's failure, not the store's: a retry would meet the same effect")
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("aborted");
            assertThat(Sql.aborted(c)).as("rolled back to the savepoint: the caller can go on").isFalse();
            c.commit();
        }
        assertThat(keys(consumer)).isZero();
    }

    @Test
    void noTransactionIsAClearErrorAndWritesNothing() throws SQLException {
        String consumer = fresh("c");
        try (Connection c = pg.connection()) {
            c.setAutoCommit(true);
            JoinedInboxStore inbox = new JoinedInboxStore(CallerTransaction.jdbc(c));
            assertThatThrownBy(() -> inbox.runOnce(InboxKey.of(consumer, "m-1"), Fingerprint.of("b"), work -> null))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("auto-commit");
            c.setAutoCommit(false);
        }
        EntityManager em = pg.db().entityManagerFactory().createEntityManager();
        try {
            JoinedInboxStore inbox = new JoinedInboxStore(CallerTransaction.jpa(em));
            assertThatThrownBy(() -> inbox.runOnce(InboxKey.of(consumer, "m-2"), Fingerprint.of("b"), work -> null))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("no active transaction");
        } finally {
            em.close();
        }
        assertThat(keys(consumer)).isZero();
    }

    @Test
    void anAlreadyAbortedCallerTransactionIsAClearError() throws SQLException {
        try (Connection c = pg.connection()) {
            try (Statement s = c.createStatement()) {
                s.execute("SELECT 1/0");
            } catch (SQLException expected) {
                // aborted by the caller's own statement
            }
            JoinedInboxStore inbox = new JoinedInboxStore(CallerTransaction.jdbc(c));
            assertThatThrownBy(() -> inbox.runOnce(InboxKey.of(fresh("c"), "m-1"), Fingerprint.of("b"), work -> null))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("already aborted");
            c.rollback();
        }
    }

    @Test
    void aJpaEntityWrittenInTheEffectCommitsWithTheKeyInTheCallersEntityManager() {
        String consumer = fresh("c");
        String account = fresh("acc");
        EntityManager em = pg.db().entityManagerFactory().createEntityManager();
        try {
            JoinedInboxStore inbox = new JoinedInboxStore(CallerTransaction.jpa(em));
            em.getTransaction().begin();
            Outcome first = inbox.runOnce(InboxKey.of(consumer, "m-1"), Fingerprint.of("b"), work -> {
                em.persist(new Account(account, 42));
                return null;
            }).outcome();
            Outcome again = inbox.runOnce(InboxKey.of(consumer, "m-1"), Fingerprint.of("b"), work -> {
                throw new AssertionError("ran twice");
            }).outcome();
            em.getTransaction().commit();
            assertThat(first).isEqualTo(Outcome.PROCESSED);
            assertThat(again).isEqualTo(Outcome.DUPLICATE);
        } finally {
            em.close();
        }
        assertThat(keys(consumer)).isEqualTo(1);
        assertThat(accounts.balance(account)).isEqualTo(42);
    }

    @Test
    void aJpaEffectThatFailsAfterChangingAnEntityKeepsNothingEvenWhenTheCallerCatchesAndCommits() {
        String consumer = fresh("c");
        String account = fresh("acc");
        String mine = fresh("acc");
        EntityManager setup = pg.db().entityManagerFactory().createEntityManager();
        setup.getTransaction().begin();
        setup.persist(new Account(account, 100));
        setup.getTransaction().commit();
        setup.close();
        EntityManager em = pg.db().entityManagerFactory().createEntityManager();
        try {
            JoinedInboxStore inbox = new JoinedInboxStore(CallerTransaction.jpa(em));
            em.getTransaction().begin();
            em.persist(new Account(mine, 1)); // the caller's own work, pending in the persistence context
            assertThatThrownBy(() -> inbox.runOnce(InboxKey.of(consumer, "m-1"), Fingerprint.of("b"), work -> {
                em.find(Account.class, account).credit(50); // dirty, not yet flushed
                throw new IllegalStateException("boom after changing an entity");
            })).hasMessage("boom after changing an entity");
            assertThat(em.getTransaction().getRollbackOnly())
                    .as("a persistence context cannot go back to a savepoint: the whole transaction is doomed").isTrue();
            try {
                em.getTransaction().commit(); // the caller commits after catching: Hibernate rolls back instead
            } catch (jakarta.persistence.RollbackException strictJpa) {
                // with JPA transaction compliance on, the same rollback is reported
            }
        } finally {
            if (em.getTransaction().isActive()) {
                em.getTransaction().rollback();
            }
            em.close();
        }
        assertThat(accounts.balance(account)).as("the effect's change to the entity").isEqualTo(100);
        assertThat(keys(consumer)).isZero();
    }

    @Test
    void aSecondCallerWaitsForTheFirstsTransactionAndThenSeesADuplicateOrRunsIfItRolledBack() throws Exception {
        for (boolean firstCommits : new boolean[] {true, false}) {
            String consumer = fresh("c");
            String account = fresh("acc");
            InboxKey key = InboxKey.of(consumer, "m-1");
            try (Connection first = pg.connection()) {
                new JoinedInboxStore(CallerTransaction.jdbc(first)).runOnce(key, Fingerprint.of("b"), work -> {
                    CallerHarness.credit(work.connection(), account, 10);
                    return null;
                });
                CompletableFuture<Outcome> second = CompletableFuture.supplyAsync(() -> {
                    try (Connection c = pg.connection()) {
                        Outcome o = new JoinedInboxStore(CallerTransaction.jdbc(c)).runOnce(key, Fingerprint.of("b"),
                                work -> {
                                    CallerHarness.credit(work.connection(), account, 10);
                                    return null;
                                }).outcome();
                        c.commit();
                        return o;
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                });
                Thread.sleep(300);
                assertThat(second).as("blocked on the first caller's uncommitted key").isNotDone();
                if (firstCommits) {
                    first.commit();
                } else {
                    first.rollback();
                }
                assertThat(second.get(10, TimeUnit.SECONDS))
                        .isEqualTo(firstCommits ? Outcome.DUPLICATE : Outcome.PROCESSED);
            }
            assertThat(accounts.balance(account)).as("first commits: %s", firstCommits).isEqualTo(10);
            assertThat(keys(consumer)).isEqualTo(1);
        }
    }

    @Test
    void versionedAndUpsertJoinTheCallersTransactionToo() throws SQLException {
        String product = fresh("p");
        String order = fresh("o");
        try (Connection c = pg.connection()) {
            CallerTransaction tx = CallerTransaction.jdbc(c);
            JoinedVersionedStore<Long> prices = new JoinedVersionedStore<>(tx, ProductPrice.table());
            JoinedUpsertStore<String> shipments = new JoinedUpsertStore<>(tx, Shipment.table());
            assertThat(prices.apply(new dev.idemkit.domain.versioned.VersionedEvent<>(product,
                    dev.idemkit.domain.Version.of(2), 200L), work -> null)).isEqualTo(Outcome.PROCESSED);
            assertThat(prices.apply(new dev.idemkit.domain.versioned.VersionedEvent<>(product,
                    dev.idemkit.domain.Version.of(1), 100L), work -> null)).isEqualTo(Outcome.STALE);
            assertThat(shipments.insertIfAbsent(dev.idemkit.domain.NaturalKey.of(order), "here", work -> null))
                    .isEqualTo(Outcome.PROCESSED);
            assertThat(shipments.insertIfAbsent(dev.idemkit.domain.NaturalKey.of(order), "there", work -> null))
                    .isEqualTo(Outcome.DUPLICATE);
            c.rollback();
        }
        assertThat(pg.queryLong("SELECT count(*) FROM product_prices WHERE id = ?", product)).isZero();
        assertThat(pg.queryLong("SELECT count(*) FROM shipments WHERE order_id = ?", order)).isZero();
    }

    @Test
    void anIdempotencyKeyClaimPutsTheCallersLockTimeoutBackAndAFiveHundredKeepsNothing() throws SQLException {
        String account = fresh("acc");
        dev.idemkit.domain.httpkey.ScopedKey key = dev.idemkit.domain.httpkey.ScopedKey.of(
                "client-" + UUID.randomUUID(), UUID.randomUUID().toString());
        dev.idemkit.domain.httpkey.KeyPolicy policy = dev.idemkit.domain.httpkey.KeyPolicy.defaults();
        try (Connection c = pg.connection()) {
            try (Statement s = c.createStatement()) {
                s.execute("SET LOCAL lock_timeout = '7s'");
            }
            CallerHarness.credit(c, account, 3); // the caller's own work before
            JoinedIdempotencyClaims claims = new JoinedIdempotencyClaims(CallerTransaction.jdbc(c));
            var attempt = claims.attempt(key, Fingerprint.of("req"), policy, java.time.Duration.ofSeconds(5), work -> {
                CallerHarness.credit(work.connection(), account, 100);
                return new dev.idemkit.domain.httpkey.StoredResponse(503, java.util.Map.of(), new byte[0]);
            });
            assertThat(attempt).isInstanceOf(dev.idemkit.ports.out.IdempotencyClaims.Attempt.Ran.class);
            assertThat(lockTimeout(c)).as("the caller's lock_timeout after a 5xx").isEqualTo("7s");
            assertThat(claims.find(key)).as("a 5xx keeps no key").isEmpty();
            c.commit();
        }
        assertThat(accounts.balance(account)).as("the caller's credit, not the 5xx handler's").isEqualTo(3);
    }

    private static String lockTimeout(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); var rs = s.executeQuery("SELECT current_setting('lock_timeout')")) {
            rs.next();
            return rs.getString(1);
        }
    }

    @Test
    void aCompletedIdempotencyKeyClaimAlsoPutsTheCallersLockTimeoutBack() throws SQLException {
        var key = dev.idemkit.domain.httpkey.ScopedKey.of("client-" + UUID.randomUUID(), UUID.randomUUID().toString());
        try (Connection c = pg.connection()) {
            try (Statement s = c.createStatement()) {
                s.execute("SET LOCAL lock_timeout = '7s'");
            }
            var attempt = new JoinedIdempotencyClaims(CallerTransaction.jdbc(c)).attempt(key, Fingerprint.of("req"),
                    dev.idemkit.domain.httpkey.KeyPolicy.defaults(), java.time.Duration.ofSeconds(5),
                    work -> new dev.idemkit.domain.httpkey.StoredResponse(201, java.util.Map.of(), new byte[] {1}));
            assertThat(attempt).isInstanceOf(dev.idemkit.ports.out.IdempotencyClaims.Attempt.Ran.class);
            assertThat(lockTimeout(c)).as("the caller's lock_timeout after a stored 2xx").isEqualTo("7s");
            c.commit();
        }
    }

    @Test
    void aJpaCallerWhoseClaimGaveUpWaitingIsNotDoomedNothingOfItsRan() throws SQLException {
        var key = dev.idemkit.domain.httpkey.ScopedKey.of("client-" + UUID.randomUUID(), UUID.randomUUID().toString());
        var policy = dev.idemkit.domain.httpkey.KeyPolicy.defaults();
        try (Connection holder = pg.connection()) { // another request holds the claim, uncommitted
            new JoinedIdempotencyClaims(CallerTransaction.jdbc(holder)).attempt(key, Fingerprint.of("req"), policy,
                    java.time.Duration.ofSeconds(5),
                    work -> new dev.idemkit.domain.httpkey.StoredResponse(201, java.util.Map.of(), new byte[0]));
            EntityManager em = pg.db().entityManagerFactory().createEntityManager();
            try {
                em.getTransaction().begin();
                var attempt = new JoinedIdempotencyClaims(CallerTransaction.jpa(em)).attempt(key, Fingerprint.of("req"),
                        policy, java.time.Duration.ofMillis(200), work -> {
                            throw new AssertionError("ran while another request held the key");
                        });
                assertThat(attempt).isInstanceOf(dev.idemkit.ports.out.IdempotencyClaims.Attempt.Busy.class);
                assertThat(em.getTransaction().getRollbackOnly()).as("doomed although nothing of it ran").isFalse();
                em.getTransaction().rollback();
            } finally {
                em.close();
            }
            holder.rollback();
        }
    }
}
