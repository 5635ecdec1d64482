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

    private static Request request(ClientId client, String key, String body) {
        return new Request(client, key, "POST", "/payments", body.getBytes(StandardCharsets.UTF_8));
    }
}
