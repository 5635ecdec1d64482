package dev.idemkit.ports.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.httpkey.ClientId;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.contract.Race;
import dev.idemkit.ports.in.IdempotentRequests.Execution;
import dev.idemkit.ports.in.IdempotentRequests.Reply;
import dev.idemkit.ports.in.IdempotentRequests.Request;
import dev.idemkit.ports.memory.ForwardingIdempotencyRecords;
import dev.idemkit.ports.memory.InMemoryIdempotencyRecords;
import dev.idemkit.ports.out.IdempotencyRecords;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class IdempotentRequestServiceTest {
    private static final ClientId ALICE = ClientId.of("alice");
    private static final ClientId BOB = ClientId.of("bob");

    private final InMemoryIdempotencyRecords records = new InMemoryIdempotencyRecords();
    private final IdempotentRequestService service = new IdempotentRequestService(records, KeyPolicy.defaults());
    private final AtomicInteger executions = new AtomicInteger();

    @Test
    void hundredParallelSameKeyRequestsExecuteOnceAndGetIdenticalResponses() {
        Request request = post(ALICE, "order-1", "{\"amount\":10}");
        Execution slowCreate = () -> {
            executions.incrementAndGet();
            Thread.sleep(200);
            return created();
        };
        List<Reply> replies = Race.run(100, i -> service.handle(request, slowCreate));

        assertThat(executions).hasValue(1);
        StoredResponse first = replies.get(0).response();
        assertThat(replies).allSatisfy(r -> {
            assertThat(r.response().status()).isEqualTo(201);
            assertThat(r.response().body()).isEqualTo(first.body());
            assertThat(r.response()).isEqualTo(first);
        });
        assertThat(replies.stream().filter(Reply::replayed).count()).isEqualTo(99);
    }

    @Test
    void retryAfterCompletionReplaysTheStoredResponse() {
        Request request = post(ALICE, "order-1", "{\"amount\":10}");
        Reply first = service.handle(request, this::create);
        Reply retry = service.handle(request, this::create);
        assertThat(first.replayed()).isFalse();
        assertThat(retry.replayed()).isTrue();
        assertThat(retry.response()).isEqualTo(first.response());
        assertThat(executions).hasValue(1);
    }

    @Test
    void sameKeyWithAnotherBodyIs422ProblemJson() {
        service.handle(post(ALICE, "order-1", "{\"amount\":10}"), this::create);
        Reply reply = service.handle(post(ALICE, "order-1", "{\"amount\":99}"), this::create);
        assertProblem(reply, 422, "idempotency-key-reused");
        assertThat(executions).hasValue(1);
    }

    @Test
    void missingOrMalformedKeyIs400ProblemJson() {
        for (String header : new String[] {null, "", "has space", "\"unterminated", "k".repeat(256), "ação"}) {
            Reply reply = service.handle(post(ALICE, header, "{}"), this::create);
            assertProblem(reply, 400, "invalid-idempotency-key");
        }
        assertThat(executions).hasValue(0);
    }

    @Test
    void quotedKeyIsTheSameKeyAsTheBareOne() {
        service.handle(post(ALICE, "order-1", "{}"), this::create);
        Reply quoted = service.handle(post(ALICE, "\"order-1\"", "{}"), this::create);
        assertThat(quoted.replayed()).isTrue();
        assertThat(executions).hasValue(1);
    }

    @Test
    void serverErrorReleasesTheKeySoThatTheRetryRuns() {
        Request request = post(ALICE, "order-1", "{}");
        Reply failed = service.handle(request, () -> {
            executions.incrementAndGet();
            return new StoredResponse(503, Map.of(), bytes("try later"));
        });
        assertThat(failed.response().status()).isEqualTo(503);
        Reply retry = service.handle(request, this::create);
        assertThat(retry.replayed()).isFalse();
        assertThat(retry.response().status()).isEqualTo(201);
        assertThat(service.handle(request, this::create).replayed()).isTrue();
        assertThat(executions).hasValue(2);
    }

    @Test
    void exceptionReleasesTheKeySoThatTheRetryRuns() {
        Request request = post(ALICE, "order-1", "{}");
        IllegalStateException crash = new IllegalStateException("handler crashed");
        assertThatThrownBy(() -> service.handle(request, () -> {
            throw crash;
        })).isSameAs(crash);
        assertThat(service.handle(request, this::create).replayed()).isFalse();
        assertThat(executions).hasValue(1);
    }

    @Test
    void withoutWaitingAConcurrentSameKeyRequestIs409() throws Exception {
        IdempotentRequestService impatient = new IdempotentRequestService(records,
                KeyPolicy.defaults().withWaitBound(Duration.ZERO));
        Request request = post(ALICE, "order-1", "{}");
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        CompletableFuture<Reply> first = CompletableFuture.supplyAsync(() -> impatient.handle(request, () -> {
            started.countDown();
            finish.await(10, TimeUnit.SECONDS);
            return create();
        }));
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

        assertProblem(impatient.handle(request, this::create), 409, "request-in-progress");
        finish.countDown();
        assertThat(first.get(10, TimeUnit.SECONDS).response().status()).isEqualTo(201);
        assertThat(impatient.handle(request, this::create).replayed()).isTrue();
        assertThat(executions).hasValue(1);
    }

    @Test
    void twoClientsWithTheSameKeyExecuteTwice() {
        Reply alice = service.handle(post(ALICE, "order-1", "{}"), this::create);
        Reply bob = service.handle(post(BOB, "order-1", "{}"), this::create);
        assertThat(executions).hasValue(2);
        assertThat(alice.replayed()).isFalse();
        assertThat(bob.replayed()).isFalse();
        assertThat(bob.response().body()).isNotEqualTo(alice.response().body());
    }

    @Test
    void optionalKeyAbsentExecutesEveryTime() {
        IdempotentRequestService optional = new IdempotentRequestService(records,
                new KeyPolicy(Duration.ofHours(24), Duration.ofSeconds(10), KeyPolicy.Requirement.OPTIONAL));
        optional.handle(post(ALICE, null, "{}"), this::create);
        optional.handle(post(ALICE, null, "{}"), this::create);
        assertThat(executions).hasValue(2);
    }

    @Test
    void aRequestSlowerThanItsLeaseKeepsItsKeyAndTheRetryWaitsForIt() throws Exception {
        KeyPolicy shortLease = KeyPolicy.defaults().withLease(Duration.ofMillis(300)).withWaitBound(Duration.ofSeconds(5));
        IdempotentRequestService leased = new IdempotentRequestService(records, shortLease);
        Request request = post(ALICE, "order-1", "{}");
        CountDownLatch started = new CountDownLatch(1);
        CompletableFuture<Reply> slow = CompletableFuture.supplyAsync(() -> leased.handle(request, () -> {
            started.countDown();
            Thread.sleep(1200); // four leases long
            return create();
        }));
        assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(700); // past the first lease: without renewal the retry would take the key over

        Reply retry = leased.handle(request, this::create);
        Reply first = slow.get(10, TimeUnit.SECONDS);
        assertThat(executions).as("one execution").hasValue(1);
        assertThat(first.replayed()).isFalse();
        assertThat(retry.replayed()).isTrue();
        assertThat(retry.response()).isEqualTo(first.response());
    }

    @Test
    void aRequestWhoseClaimWasTakenOverAnswersWithTheKeysAnswerNotItsOwn() throws Exception {
        // a process that stalls past its lease: its renewals never land, another request takes the key
        InMemoryIdempotencyRecords stalling = new InMemoryIdempotencyRecords();
        IdempotencyRecords noRenewals = new ForwardingIdempotencyRecords(stalling) {
            @Override
            public boolean renew(ScopedKey key, KeyRecord.InProgress claim, Duration lease) {
                return true; // said, not done
            }
        };
        KeyPolicy shortLease = KeyPolicy.defaults().withLease(Duration.ofMillis(200)).withWaitBound(Duration.ofSeconds(5));
        IdempotentRequestService stalled = new IdempotentRequestService(noRenewals, shortLease);
        IdempotentRequestService other = new IdempotentRequestService(stalling, shortLease);
        Request request = post(ALICE, "order-1", "{}");
        CountDownLatch started = new CountDownLatch(1);
        CompletableFuture<Reply> slow = CompletableFuture.supplyAsync(() -> stalled.handle(request, () -> {
            started.countDown();
            Thread.sleep(800);
            return create();
        }));
        assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(400);
        Reply takeover = other.handle(request, this::create);
        Reply late = slow.get(10, TimeUnit.SECONDS);

        assertThat(takeover.replayed()).isFalse();
        assertThat(late.response()).as("the key's one answer, not the late request's own").isEqualTo(takeover.response());
        assertThat(late.replayed()).isTrue();
        assertThat(stalled.handle(request, this::create).response()).isEqualTo(takeover.response());
    }

    @Test
    void aLateRequestWhoseLapsedClaimNobodyTookStillAnswersWithItsOwnResult() {
        InMemoryIdempotencyRecords store = new InMemoryIdempotencyRecords();
        IdempotencyRecords noRenewals = new ForwardingIdempotencyRecords(store) {
            @Override
            public boolean renew(ScopedKey key, KeyRecord.InProgress claim, Duration lease) {
                return true; // said, not done: the lease lapses
            }
        };
        IdempotentRequestService stalled = new IdempotentRequestService(noRenewals,
                KeyPolicy.defaults().withLease(Duration.ofMillis(100)).withWaitBound(Duration.ofMillis(300)));
        Request request = post(ALICE, "order-1", "{}");
        Reply late = stalled.handle(request, () -> {
            Thread.sleep(400);
            return create();
        });
        assertThat(late.response().status()).isEqualTo(201);
        assertThat(stalled.handle(request, this::create).response()).isEqualTo(late.response());
        assertThat(executions).hasValue(1);
    }

    @Test
    void aRequestWhoseLapsedClaimVanishedWithNoOtherAnswerSaysItsOutcomeIsUnknown() {
        // as on Redis, where a lapsed claim's key is gone: the completion finds nothing to complete
        InMemoryIdempotencyRecords store = new InMemoryIdempotencyRecords();
        IdempotencyRecords vanishing = new ForwardingIdempotencyRecords(store) {
            @Override
            public boolean renew(ScopedKey key, KeyRecord.InProgress claim, Duration lease) {
                return true;
            }

            @Override
            public boolean complete(ScopedKey key, KeyRecord.InProgress claim, StoredResponse response, Duration ttl) {
                return false;
            }
        };
        IdempotentRequestService stalled = new IdempotentRequestService(vanishing,
                KeyPolicy.defaults().withLease(Duration.ofMillis(100)).withWaitBound(Duration.ofMillis(300)));
        Reply late = stalled.handle(post(ALICE, "order-1", "{}"), () -> {
            Thread.sleep(400);
            return create();
        });
        assertProblem(late, 500, "idempotency-claim-lost");
    }

    private StoredResponse create() {
        executions.incrementAndGet();
        return created();
    }

    /** A 201 whose body is unique per execution, so a replay is told from a second execution. */
    private static StoredResponse created() {
        return new StoredResponse(201, Map.of("Content-Type", "application/json"),
                bytes("{\"id\":\"" + UUID.randomUUID() + "\"}"));
    }

    private static void assertProblem(Reply reply, int status, String type) {
        assertThat(reply.replayed()).isFalse();
        assertThat(reply.response().status()).isEqualTo(status);
        assertThat(reply.response().headers()).containsEntry("Content-Type", "application/problem+json");
        assertThat(new String(reply.response().body(), StandardCharsets.UTF_8))
                .contains("\"status\":" + status).contains("/problems/" + type);
    }

    private static Request post(ClientId client, String keyHeader, String body) {
        return new Request(client, keyHeader, "POST", "/orders", bytes(body));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
