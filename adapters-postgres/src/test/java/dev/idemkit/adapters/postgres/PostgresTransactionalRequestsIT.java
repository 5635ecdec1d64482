package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.httpkey.ClientId;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.contract.Race;
import dev.idemkit.ports.in.IdempotentRequests.Reply;
import dev.idemkit.ports.in.IdempotentRequests.Request;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.service.IdempotentRequestService;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The first request's effect in its claim's transaction: same-key requests block on the row, then replay. */
class PostgresTransactionalRequestsIT {
    private static final int PARALLEL = 12;
    private static TestDatabase pg;
    private static PostgresTransactionalRequests requests;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start(PARALLEL + 4);
        requests = new PostgresTransactionalRequests(pg.db(), KeyPolicy.defaults());
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    @Test
    void parallelSameKeyRequestsRunOnceAndAllGetTheIdenticalResponse() {
        ClientId client = ClientId.of("client-" + UUID.randomUUID());
        String account = "acc-" + UUID.randomUUID();
        AtomicInteger executions = new AtomicInteger();
        List<Reply> replies = Race.run(PARALLEL, i -> requests.handle(request(client, "k-1", "{\"amount\":5}"), work -> {
            executions.incrementAndGet();
            Accounts.credit(work, account, 5);
            Thread.sleep(150);
            return new StoredResponse(201, Map.of("Content-Type", "application/json"),
                    ("{\"payment\":\"" + UUID.randomUUID() + "\"}").getBytes(StandardCharsets.UTF_8));
        }));

        assertThat(executions).hasValue(1);
        assertThat(replies.stream().map(Reply::response).distinct()).hasSize(1);
        assertThat(replies.stream().filter(Reply::replayed)).hasSize(PARALLEL - 1);
        assertThat(new Accounts(pg).balance(account)).isEqualTo(5);
    }

    @Test
    void aServerErrorRollsBackTheEffectAndReleasesTheKeySoThatTheRetryRuns() {
        ClientId client = ClientId.of("client-" + UUID.randomUUID());
        String account = "acc-" + UUID.randomUUID();
        Reply failed = requests.handle(request(client, "k", "{}"), work -> {
            Accounts.credit(work, account, 5);
            return new StoredResponse(503, Map.of(), new byte[0]);
        });
        assertThat(failed.response().status()).isEqualTo(503);
        assertThat(new Accounts(pg).balance(account)).isZero();

        Reply retried = requests.handle(request(client, "k", "{}"), work -> {
            Accounts.credit(work, account, 5);
            return new StoredResponse(200, Map.of(), new byte[] {1});
        });
        assertThat(retried.replayed()).isFalse();
        assertThat(new Accounts(pg).balance(account)).isEqualTo(5);
    }

    @Test
    void anExceptionRollsBackEverythingAndReachesTheCaller() {
        ClientId client = ClientId.of("client-" + UUID.randomUUID());
        String account = "acc-" + UUID.randomUUID();
        IllegalStateException boom = new IllegalStateException("boom");
        assertThatThrownBy(() -> requests.handle(request(client, "k", "{}"), work -> {
            Accounts.credit(work, account, 5);
            throw boom;
        })).isSameAs(boom);
        assertThat(new Accounts(pg).balance(account)).isZero();
        assertThat(pg.queryLong("SELECT count(*) FROM idempotency_records WHERE client_id = ?", client.value())).isZero();
    }

    @Test
    void theSameKeyForAnotherBodyIs422AndAMalformedKeyIs400() {
        ClientId client = ClientId.of("client-" + UUID.randomUUID());
        requests.handle(request(client, "k", "{\"a\":1}"), work -> new StoredResponse(200, Map.of(), new byte[0]));
        assertThat(requests.handle(request(client, "k", "{\"a\":2}"), work -> new StoredResponse(200, Map.of(), new byte[0]))
                .response().status()).isEqualTo(422);
        assertThat(requests.handle(request(client, "bad key", "{}"), work -> new StoredResponse(200, Map.of(), new byte[0]))
                .response().status()).isEqualTo(400);
    }

    @Test
    void aRequestWaitingLongerThanTheBoundGets409() throws Exception {
        ClientId client = ClientId.of("client-" + UUID.randomUUID());
        PostgresTransactionalRequests impatient = new PostgresTransactionalRequests(pg.db(),
                KeyPolicy.defaults().withWaitBound(Duration.ofMillis(200)));
        Thread slow = new Thread(() -> impatient.handle(request(client, "k", "{}"), work -> {
            Thread.sleep(1500);
            return new StoredResponse(200, Map.of(), new byte[0]);
        }));
        slow.start();
        Thread.sleep(300);
        Reply waited = impatient.handle(request(client, "k", "{}"), work -> new StoredResponse(200, Map.of(), new byte[0]));
        slow.join();
        assertThat(waited.response().status()).isEqualTo(409);
    }

    @Test
    void theTransactionalPathAndThePollingServiceShareTheTableCorrectly() {
        ClientId client = ClientId.of("client-" + UUID.randomUUID());
        IdempotentRequestService polling = new IdempotentRequestService(new PostgresIdempotencyRecords(pg.db()),
                KeyPolicy.defaults());
        Reply first = polling.handle(request(client, "k", "{}"), () -> new StoredResponse(201, Map.of(), new byte[] {7}));
        Reply second = requests.handle(request(client, "k", "{}"), work -> new StoredResponse(500, Map.of(), new byte[0]));

        assertThat(first.replayed()).isFalse();
        assertThat(second.replayed()).isTrue();
        assertThat(second.response()).isEqualTo(first.response());
    }

    private static Request request(ClientId client, String key, String body) {
        return new Request(client, key, "POST", "/payments", body.getBytes(StandardCharsets.UTF_8));
    }
}
