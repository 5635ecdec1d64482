package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.httpkey.ClientId;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.in.IdempotentRequests.Reply;
import dev.idemkit.ports.in.IdempotentRequests.Request;
import dev.idemkit.ports.out.NoTransaction;
import dev.idemkit.ports.service.IdempotentRequestService;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What only PostgreSQL's claims have to get right beyond the shared flow ({@link PostgresIdempotentRequestsContractIT}):
 * the transactional claims and leased claims on the same table understand each other's records.
 */
class PostgresIdempotencyClaimsIT {
    private static TestDatabase pg;
    private static IdempotentRequestService<JpaUnitOfWork> requests;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start(4);
        requests = new IdempotentRequestService<>(new PostgresIdempotencyClaims(pg.db()), KeyPolicy.defaults());
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    @Test
    void theTransactionalPathAndThePollingServiceShareTheTableCorrectly() {
        ClientId client = ClientId.of("client-" + UUID.randomUUID());
        IdempotentRequestService<NoTransaction> polling = IdempotentRequestService.overRecords(
                new PostgresIdempotencyRecords(pg.db()), KeyPolicy.defaults());
        Reply first = polling.handle(request(client, "k", "{}"), work -> new StoredResponse(201, Map.of(), new byte[] {7}));
        Reply second = requests.handle(request(client, "k", "{}"), work -> new StoredResponse(500, Map.of(), new byte[0]));

        assertThat(first.replayed()).isFalse();
        assertThat(second.replayed()).isTrue();
        assertThat(second.response()).isEqualTo(first.response());
    }

    /** An effect that marked its unit of work rollback-only failed: without a key too, never a 2xx for nothing kept. */
    @Test
    void aRequestWithoutAKeyWhoseEffectMarkedRollbackOnlyFailsInsteadOfAnswering201() {
        IdempotentRequestService<JpaUnitOfWork> optional = new IdempotentRequestService<>(
                new PostgresIdempotencyClaims(pg.db()), new KeyPolicy(java.time.Duration.ofHours(24),
                        java.time.Duration.ofSeconds(10), KeyPolicy.Requirement.OPTIONAL));
        String account = "acc-" + UUID.randomUUID();

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> optional.handle(request(ClientId.of("c"), null, "{}"),
                work -> {
                    Accounts.credit(work, account, 5);
                    work.setRollbackOnly();
                    return new StoredResponse(201, Map.of(), new byte[] {1});
                })).hasMessageContaining("rollback-only");
        assertThat(new Accounts(pg).balance(account)).isZero();
    }

    /**
     * The claim's wait bound is the claim's, not the effect's: an effect that waits for a lock (another transaction
     * holds the account's row for 1.5 s) runs to its end, although the claim's bound was 300 ms. Before, the claim
     * left lock_timeout at what remained of the bound for the whole transaction, and the effect failed (a 503 on a
     * key that was free).
     */
    @Test
    void anEffectThatWaitsForALockLongerThanTheClaimsWaitBoundStillRuns() throws Exception {
        IdempotentRequestService<JpaUnitOfWork> shortWait = new IdempotentRequestService<>(
                new PostgresIdempotencyClaims(pg.db()), new KeyPolicy(java.time.Duration.ofHours(24),
                        java.time.Duration.ofMillis(300), KeyPolicy.Requirement.REQUIRED));
        String account = "acc-" + UUID.randomUUID();
        pg.db().inTransaction(work -> {
            Accounts.credit(work, account, 1);
            return null;
        });
        java.util.concurrent.CountDownLatch locked = new java.util.concurrent.CountDownLatch(1);
        Thread holder = new Thread(() -> {
            try (java.sql.Connection c = pg.connection();
                    java.sql.PreparedStatement ps = c.prepareStatement("SELECT 1 FROM accounts WHERE id = ? FOR UPDATE")) {
                ps.setString(1, account);
                ps.executeQuery().close();
                locked.countDown();
                Thread.sleep(1_500);
                c.rollback();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, "row-lock-holder");
        holder.start();
        assertThat(locked.await(10, java.util.concurrent.TimeUnit.SECONDS)).as("the row locked").isTrue();
        Reply reply = shortWait.handle(request(ClientId.of("c-" + UUID.randomUUID()), UUID.randomUUID().toString(),
                "{}"), work -> {
                    Accounts.credit(work, account, 5); // waits for the holder's lock
                    return new StoredResponse(201, Map.of(), new byte[] {1});
                });
        holder.join(10_000);
        assertThat(reply.response().status()).as(new String(reply.response().body(), StandardCharsets.UTF_8))
                .isEqualTo(201);
        assertThat(new Accounts(pg).balance(account)).isEqualTo(6);
    }

    /**
     * The wait for a pooled connection counts against the wait bound: with every connection of the pool held, a
     * request with a 300 ms bound is refused within about that (a StoreUnavailableException saying why, a 503 with
     * Retry-After at the payments API), not after the pool's own 30 s.
     */
    @Test
    void aRequestThatFindsNoFreeConnectionWithinTheWaitBoundIsRefusedSayingSoNotAfterThePoolsTimeout()
            throws Exception {
        try (PostgresDatabase small = PostgresDatabase.builder(PostgresSettings.fromEnvironment().withSchema(pg.schema())
                .withPoolSize(2)).start()) {
            IdempotentRequestService<JpaUnitOfWork> shortWait = new IdempotentRequestService<>(
                    new PostgresIdempotencyClaims(small), new KeyPolicy(java.time.Duration.ofHours(24),
                            java.time.Duration.ofMillis(300), KeyPolicy.Requirement.REQUIRED));
            java.util.List<java.sql.Connection> held = new java.util.ArrayList<>();
            try {
                held.add(small.dataSource().getConnection());
                held.add(small.dataSource().getConnection());
                long start = System.nanoTime();
                org.assertj.core.api.Assertions.assertThatThrownBy(() -> shortWait.handle(request(
                        ClientId.of("c-" + UUID.randomUUID()), UUID.randomUUID().toString(), "{}"),
                        work -> new StoredResponse(201, Map.of(), new byte[] {1})))
                        .isInstanceOf(dev.idemkit.ports.out.StoreBusyException.class)
                        .hasMessageContaining("no database connection was free within the wait bound");
                assertThat(java.time.Duration.ofNanos(System.nanoTime() - start))
                        .as("refused within the bound (with room for a loaded machine), not after the pool's 30 s")
                        .isLessThan(java.time.Duration.ofSeconds(10));
            } finally {
                for (java.sql.Connection c : held) {
                    c.close();
                }
            }
            Reply free = shortWait.handle(request(ClientId.of("c-" + UUID.randomUUID()), UUID.randomUUID().toString(),
                    "{}"), work -> new StoredResponse(201, Map.of(), new byte[] {1}));
            assertThat(free.response().status()).as("with a connection free again").isEqualTo(201);
        }
    }

    private static Request request(ClientId client, String key, String body) {
        return new Request(client, key, "POST", "/payments", body.getBytes(StandardCharsets.UTF_8));
    }
}
