package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.NaturalKey;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.Version;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.domain.versioned.VersionedEvent;
import jakarta.persistence.PersistenceException;
import java.sql.PreparedStatement;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The seed's two examples as the user's own JPA entities, written through {@link JpaUnitOfWork} in
 * the store's transaction: crediting an account balance and reserving inventory for an order. Plus
 * the versioned and upsert stores over entity tables.
 */
class SeedExamplesIT {
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
    void creditingAnAccountEntityWithJpqlHappensOncePerMessage() {
        String account = "acc-" + UUID.randomUUID();
        pg.db().inTransaction(work -> {
            work.entityManager().persist(new Account(account, 0));
            return null;
        });
        InboxKey key = InboxKey.of("payments", "pay-" + UUID.randomUUID());
        for (int delivery = 0; delivery < 2; delivery++) {
            inbox.runOnce(key, Fingerprint.of("credit 50"), work -> work.entityManager()
                    .createQuery("UPDATE Account a SET a.balance = a.balance + :x WHERE a.id = :id")
                    .setParameter("x", 50L).setParameter("id", account).executeUpdate());
        }
        assertThat(new Accounts(pg).balance(account)).isEqualTo(50);
    }

    @Test
    void reservingInventoryWithAJpaEntityHappensOncePerOrderMessage() {
        String order = "order-" + UUID.randomUUID();
        InboxKey key = InboxKey.of("inventory", "evt-" + UUID.randomUUID());
        Outcome first = inbox.runOnce(key, Fingerprint.of(order), work -> {
            work.entityManager().persist(new InventoryReservation(order, 3, Instant.now()));
            return null;
        }).outcome();
        Outcome second = inbox.runOnce(key, Fingerprint.of(order), work -> {
            work.entityManager().persist(new InventoryReservation(order, 3, Instant.now()));
            return null;
        }).outcome();

        assertThat(first).isEqualTo(Outcome.PROCESSED);
        assertThat(second).isEqualTo(Outcome.DUPLICATE);
        assertThat(pg.queryLong("SELECT count(*) FROM inventory_reservations WHERE order_id = ?", order)).isOne();
        assertThat(pg.queryLong("SELECT items FROM inventory_reservations WHERE order_id = ?", order)).isEqualTo(3);
    }

    @Test
    void anEntityThatFailsToFlushRollsBackTheKeyAndIsReportedAsTheEffectsOwnFailure() {
        String order = "order-" + UUID.randomUUID();
        pg.db().inTransaction(work -> {
            work.entityManager().persist(new InventoryReservation(order, 1, Instant.now()));
            return null;
        });
        InboxKey key = InboxKey.of("inventory", "evt-" + UUID.randomUUID());

        assertThatThrownBy(() -> inbox.runOnce(key, Fingerprint.of("again"), work -> {
            work.entityManager().persist(new InventoryReservation(order, 2, Instant.now()));
            return null;
        })).isInstanceOf(PersistenceException.class);
        assertThat(inbox.recorded(key)).isEmpty();
        assertThat(pg.queryLong("SELECT items FROM inventory_reservations WHERE order_id = ?", order)).isEqualTo(1);
    }

    @Test
    void jpaAndPlainSqlInOneEffectCommitAndRollBackTogetherWithTheKey() {
        String account = "acc-" + UUID.randomUUID();
        String order = "order-" + UUID.randomUUID();
        InboxKey key = InboxKey.of("mixed", "evt-" + UUID.randomUUID());

        assertThatThrownBy(() -> inbox.runOnce(key, Fingerprint.of("x"), work -> {
            work.entityManager().persist(new InventoryReservation(order, 5, Instant.now()));
            try (PreparedStatement ps = work.connection().prepareStatement("INSERT INTO accounts (id, balance) VALUES (?, 7)")) {
                ps.setString(1, account);
                ps.executeUpdate();
            }
            throw new IllegalStateException("payment provider said no");
        })).isInstanceOf(IllegalStateException.class).hasMessage("payment provider said no");
        assertThat(inbox.recorded(key)).isEmpty();
        assertThat(pg.queryLong("SELECT count(*) FROM inventory_reservations WHERE order_id = ?", order)).isZero();
        assertThat(pg.queryLong("SELECT count(*) FROM accounts WHERE id = ?", account)).isZero();

        inbox.runOnce(key, Fingerprint.of("x"), work -> {
            work.entityManager().persist(new InventoryReservation(order, 5, Instant.now()));
            Accounts.credit(work, account, 7);
            return null;
        });
        assertThat(pg.queryLong("SELECT count(*) FROM inventory_reservations WHERE order_id = ?", order)).isOne();
        assertThat(new Accounts(pg).balance(account)).isEqualTo(7);
    }

    @Test
    void anEffectThatAbandonsItsUnitOfWorkIsAFailureAndKeepsNoKey() {
        InboxKey key = InboxKey.of("abandon", "evt-" + UUID.randomUUID());
        String account = "acc-" + UUID.randomUUID();
        assertThatThrownBy(() -> inbox.runOnce(key, Fingerprint.of("x"), work -> {
            Accounts.credit(work, account, 1);
            work.setRollbackOnly();
            return null;
        })).isInstanceOf(IllegalStateException.class).hasMessageContaining("rollback-only");
        assertThat(inbox.recorded(key)).isEmpty();
        assertThat(new Accounts(pg).balance(account)).isZero();
    }

    @Test
    void theVersionedStoreUpdatesTheUsersEntityOnlyForANewerVersion() {
        PostgresVersionedStore<Long> prices = new PostgresVersionedStore<>(pg.db(), ProductPrice.table());
        String product = "sku-" + UUID.randomUUID();

        assertThat(prices.apply(new VersionedEvent<>(product, Version.of(2), 150L))).isEqualTo(Outcome.PROCESSED);
        assertThat(prices.apply(new VersionedEvent<>(product, Version.of(1), 100L))).isEqualTo(Outcome.STALE);
        assertThat(prices.apply(new VersionedEvent<>(product, Version.of(2), 999L))).isEqualTo(Outcome.DUPLICATE);
        ProductPrice seen = pg.db().inTransaction(work -> work.entityManager().find(ProductPrice.class, product));
        assertThat(seen.version()).isEqualTo(2);
        assertThat(seen.price()).isEqualTo(150);
        assertThat(prices.apply(new VersionedEvent<>(product, Version.of(3), 175L))).isEqualTo(Outcome.PROCESSED);
        assertThat(prices.current(product).orElseThrow().value()).isEqualTo(175L);
    }

    @Test
    void theUpsertStoreCreatesTheUsersEntityOncePerNaturalKey() {
        PostgresUpsertStore<String> shipments = new PostgresUpsertStore<>(pg.db(), Shipment.table());
        NaturalKey order = NaturalKey.of("order-" + UUID.randomUUID());

        assertThat(shipments.insertIfAbsent(order, "1 Main St")).isEqualTo(Outcome.PROCESSED);
        assertThat(shipments.insertIfAbsent(order, "2 Other Rd")).isEqualTo(Outcome.DUPLICATE);
        Shipment seen = pg.db().inTransaction(work -> work.entityManager().find(Shipment.class, order.value()));
        assertThat(seen.address()).isEqualTo("1 Main St");
    }
}
