package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.NaturalKey;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.Version;
import dev.idemkit.domain.httpkey.ClientId;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.domain.versioned.VersionedEvent;
import dev.idemkit.ports.in.IdempotentRequests.Reply;
import dev.idemkit.ports.in.IdempotentRequests.Request;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.StoreUnavailableException;
import dev.idemkit.ports.service.IdempotentRequestService;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docs/ARCHITECTURE.md section 7: PostgreSQL aborts a transaction at its first failing statement, and pgjdbc's
 * {@code commit()} of an aborted transaction returns normally although the server rolled back. An
 * effect that swallows an {@code SQLException} (the "insert; a unique violation means already done"
 * idiom) must therefore never be reported as processed: the store fails, nothing is kept, and the
 * next attempt runs the effect again.
 */
class AbortedTransactionIT {
    private static TestDatabase pg;
    private static Accounts accounts;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start();
        accounts = new Accounts(pg);
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    /** The common idiom: insert a shipment, treat a unique violation as "already there", swallow it. */
    private static void swallowedUniqueViolation(JpaUnitOfWork work, String orderId) {
        Connection c = work.connection();
        for (int i = 0; i < 2; i++) {
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO shipments (order_id, address) VALUES (?, 'x')")) {
                ps.setString(1, orderId);
                ps.executeUpdate();
            } catch (SQLException alreadyThere) {
                // swallowed on purpose: the transaction is now aborted on the server
            }
        }
    }

    @Test
    void anInboxEffectThatSwallowsAStatementErrorIsNotProcessedAndKeepsNothing() {
        PostgresInboxStore inbox = new PostgresInboxStore(pg.db());
        String account = "acc-" + UUID.randomUUID();
        InboxKey key = InboxKey.of("aborted-" + UUID.randomUUID(), "m-1");

        assertThatThrownBy(() -> inbox.runOnce(key, Fingerprint.of("body"), work -> {
            Accounts.credit(work, account, 10);
            swallowedUniqueViolation(work, "order-" + UUID.randomUUID());
            return null;
        })).isInstanceOf(StoreUnavailableException.class).hasMessageContaining("aborted");

        assertThat(inbox.recorded(key)).isEmpty();
        assertThat(accounts.balance(account)).isZero();

        // the redelivery runs the effect again and this time it commits
        Outcome retried = inbox.runOnce(key, Fingerprint.of("body"), work -> {
            Accounts.credit(work, account, 10);
            return null;
        }).outcome();
        assertThat(retried.effectRan()).isTrue();
        assertThat(accounts.balance(account)).isEqualTo(10);
    }

    @Test
    void aVersionedCallbackThatSwallowsAStatementErrorStoresNoVersion() {
        PostgresVersionedStore<Long> prices = new PostgresVersionedStore<>(pg.db(), ProductPrice.table());
        String product = "p-" + UUID.randomUUID();

        assertThatThrownBy(() -> prices.apply(new VersionedEvent<>(product, Version.of(3), 300L),
                work -> {
                    swallowedUniqueViolation(work, "order-" + UUID.randomUUID());
                    return null;
                })).isInstanceOf(StoreUnavailableException.class);

        assertThat(prices.current(product)).isEmpty();
    }

    @Test
    void anUpsertCallbackThatSwallowsAStatementErrorInsertsNothing() {
        PostgresUpsertStore<String> shipments = new PostgresUpsertStore<>(pg.db(), Shipment.table());
        NaturalKey order = NaturalKey.of("order-" + UUID.randomUUID());

        assertThatThrownBy(() -> shipments.insertIfAbsent(order, "street", work -> {
            swallowedUniqueViolation(work, "other-" + UUID.randomUUID());
            return null;
        })).isInstanceOf(StoreUnavailableException.class);

        assertThat(shipments.find(order)).isEmpty();
    }

    @Test
    void aRequestWhoseEffectSwallowsAStatementErrorIsNotAnsweredAsCreatedAndReleasesItsKey() {
        IdempotentRequestService<JpaUnitOfWork> requests = new IdempotentRequestService<>(
                new PostgresIdempotencyClaims(pg.db()), KeyPolicy.defaults());
        ClientId client = ClientId.of("client-" + UUID.randomUUID());
        String account = "acc-" + UUID.randomUUID();
        Request request = new Request(client, "key-1", "POST", "/payments",
                "{\"amount\":1}".getBytes(StandardCharsets.UTF_8));

        assertThatThrownBy(() -> requests.handle(request, work -> {
            Accounts.credit(work, account, 1);
            swallowedUniqueViolation(work, "order-" + UUID.randomUUID());
            return created();
        })).isInstanceOf(StoreUnavailableException.class);

        assertThat(accounts.balance(account)).isZero();
        assertThat(new PostgresIdempotencyRecords(pg.db()).find(ScopedKey.of(client.value(), "key-1")))
                .isEmpty();

        Reply retried = requests.handle(request, work -> {
            Accounts.credit(work, account, 1);
            return created();
        });
        assertThat(retried.response().status()).isEqualTo(201);
        assertThat(retried.replayed()).isFalse();
        assertThat(accounts.balance(account)).isEqualTo(1);
    }

    @Test
    void plainInTransactionWorkThatSwallowsAStatementErrorFails() {
        String account = "acc-" + UUID.randomUUID();
        assertThatThrownBy(() -> pg.db().inTransaction(work -> {
            Accounts.credit(work, account, 7);
            swallowedUniqueViolation(work, "order-" + UUID.randomUUID());
            return null;
        })).isInstanceOf(StoreUnavailableException.class);
        assertThat(accounts.balance(account)).isZero();
    }

    @Test
    void throughADataSourceThatHidesTheDriverTheServerIsAskedAndTheDeliveryStillFails() throws Exception {
        try (com.zaxxer.hikari.HikariDataSource pool = PostgresDatabase.createPool(
                PostgresSettings.fromEnvironment().withSchema(pg.schema()).withPoolSize(2));
                PostgresDatabase hidden = PostgresDatabase.builder(PostgresSettings.fromEnvironment()
                        .withSchema(pg.schema())).dataSource(hidingTheDriver(pool)).start()) {
            PostgresInboxStore inbox = new PostgresInboxStore(hidden);
            String account = "acc-" + UUID.randomUUID();
            InboxKey key = InboxKey.of("hidden-" + UUID.randomUUID(), "m-1");

            assertThatThrownBy(() -> inbox.runOnce(key, Fingerprint.of("body"), work -> {
                Accounts.credit(work, account, 10);
                swallowedUniqueViolation(work, "order-" + UUID.randomUUID());
                return null;
            })).isInstanceOf(StoreUnavailableException.class).hasMessageContaining("aborted");
            assertThat(inbox.recorded(key)).isEmpty();
            assertThat(accounts.balance(account)).isZero();

            assertThat(inbox.runOnce(key, Fingerprint.of("body"), work -> {
                Accounts.credit(work, account, 10);
                return null;
            }).outcome().effectRan()).isTrue();
            assertThat(accounts.balance(account)).isEqualTo(10);
        }
    }

    /** Connections that refuse to unwrap to the driver's types, like some pooling or tracing wrappers. */
    private static javax.sql.DataSource hidingTheDriver(javax.sql.DataSource real) {
        return (javax.sql.DataSource) java.lang.reflect.Proxy.newProxyInstance(AbortedTransactionIT.class.getClassLoader(),
                new Class<?>[] {javax.sql.DataSource.class}, (proxy, method, args) -> {
                    Object result = invoke(method, real, args);
                    if (!(result instanceof Connection c)) {
                        return result;
                    }
                    return java.lang.reflect.Proxy.newProxyInstance(AbortedTransactionIT.class.getClassLoader(),
                            new Class<?>[] {Connection.class}, (p, m, a) -> switch (m.getName()) {
                                case "isWrapperFor" -> false;
                                case "unwrap" -> throw new SQLException("not a wrapper");
                                default -> invoke(m, c, a);
                            });
                });
    }

    private static Object invoke(java.lang.reflect.Method m, Object target, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private static StoredResponse created() {
        return new StoredResponse(201, Map.of("Content-Type", "application/json"),
                "{\"ok\":true}".getBytes(StandardCharsets.UTF_8));
    }
}
