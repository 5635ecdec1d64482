package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxKey;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link JpaUnitOfWork} opens a Hibernate session only for an effect that asks for the entity manager (issue 13: the
 * single-message path pays what a hand-written JDBC consumer pays), and a session opened late is the same transaction:
 * it sees what ran before it, commits and rolls back with the key, and its own rollback-only flag is a failure.
 */
class LazySessionIT {
    private static TestDatabase pg;
    private static PostgresInboxStore inbox;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start();
        inbox = new PostgresInboxStore(pg.db());
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    @Test
    void withoutEntitiesHibernateIsStartedOnlyWhenAnEffectFirstAsksForAnEntityManager() {
        try (PostgresDatabase db = PostgresDatabase.builder(PostgresSettings.fromEnvironment().withSchema(pg.schema())
                .withPoolSize(2)).start()) {
            PostgresInboxStore plain = new PostgresInboxStore(db);
            plain.runOnce(InboxKey.of("lazy-factory", "m-" + UUID.randomUUID()), Fingerprint.of("x"), work -> {
                work.connection();
                return null;
            });
            assertThat(db.entityManagerFactoryBuilt()).as("after a plain-SQL effect").isFalse();
            long one = plain.runOnce(InboxKey.of("lazy-factory", "m-" + UUID.randomUUID()), Fingerprint.of("x"),
                    work -> ((Number) work.entityManager().createNativeQuery("SELECT 1").getSingleResult()).longValue())
                    .value().orElseThrow();
            assertThat(one).isOne();
            assertThat(db.entityManagerFactoryBuilt()).as("after an effect that used the entity manager").isTrue();
        }
        assertThat(pg.db().entityManagerFactoryBuilt()).as("with entities: built at start, to validate them").isTrue();
    }

    @Test
    void anEffectInPlainSqlOpensNoSession() {
        String account = "acc-" + UUID.randomUUID();
        boolean opened = inbox.runOnce(InboxKey.of("lazy", "m-" + UUID.randomUUID()), Fingerprint.of("x"), work -> {
            try (PreparedStatement ps = work.connection().prepareStatement("INSERT INTO accounts (id, balance) VALUES (?, 3)")) {
                ps.setString(1, account);
                ps.executeUpdate();
            }
            return work.sessionOpened();
        }).value().orElseThrow();
        assertThat(opened).isFalse();
        assertThat(new Accounts(pg).balance(account)).isEqualTo(3);
    }

    @Test
    void aSessionOpenedLateSeesTheKeyAndCommitsWithIt() {
        String id = "m-" + UUID.randomUUID();
        String order = "order-" + UUID.randomUUID();
        long seen = inbox.runOnce(InboxKey.of("lazy", id), Fingerprint.of("x"), work -> {
            long keys = ((Number) work.entityManager()
                    .createNativeQuery("SELECT count(*) FROM processed_messages WHERE consumer = 'lazy' AND message_id = ?")
                    .setParameter(1, id).getSingleResult()).longValue();
            work.entityManager().persist(new InventoryReservation(order, 2, Instant.now()));
            // plain SQL after the entity: the connection flushes it first, so SQL sees it
            try (PreparedStatement ps = work.connection().prepareStatement(
                    "SELECT items FROM inventory_reservations WHERE order_id = ?")) {
                ps.setString(1, order);
                try (ResultSet rs = ps.executeQuery()) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getInt(1)).isEqualTo(2);
                }
            }
            return keys;
        }).value().orElseThrow();
        assertThat(seen).isOne();
        assertThat(pg.queryLong("SELECT count(*) FROM inventory_reservations WHERE order_id = ?", order)).isOne();
        assertThat(inbox.recorded(InboxKey.of("lazy", id))).isPresent();
    }

    @Test
    void theEntityManagersOwnRollbackOnlyIsAFailureAndKeepsNothing() {
        InboxKey key = InboxKey.of("lazy", "m-" + UUID.randomUUID());
        String account = "acc-" + UUID.randomUUID();
        assertThatThrownBy(() -> inbox.runOnce(key, Fingerprint.of("x"), work -> {
            Accounts.credit(work, account, 5);
            work.entityManager().getTransaction().setRollbackOnly();
            return null;
        })).isInstanceOf(IllegalStateException.class).hasMessageContaining("rollback-only");
        assertThat(inbox.recorded(key)).isEmpty();
        assertThat(new Accounts(pg).balance(account)).isZero();
    }

    @Test
    void rollbackOnlyBeforeTheSessionOpensHoldsForTheSessionToo() {
        InboxKey key = InboxKey.of("lazy", "m-" + UUID.randomUUID());
        String order = "order-" + UUID.randomUUID();
        assertThatThrownBy(() -> inbox.runOnce(key, Fingerprint.of("x"), work -> {
            work.setRollbackOnly();
            assertThat(work.entityManager().getTransaction().getRollbackOnly()).isTrue();
            work.entityManager().persist(new InventoryReservation(order, 1, Instant.now()));
            return null;
        })).isInstanceOf(IllegalStateException.class).hasMessageContaining("rollback-only");
        assertThat(inbox.recorded(key)).isEmpty();
        assertThat(pg.queryLong("SELECT count(*) FROM inventory_reservations WHERE order_id = ?", order)).isZero();
        // and the pool's connections come back clean: the next unit of work commits normally
        assertThat(inbox.runOnce(key, Fingerprint.of("x"), work -> null).outcome()).isEqualTo(Outcome.PROCESSED);
    }
}
