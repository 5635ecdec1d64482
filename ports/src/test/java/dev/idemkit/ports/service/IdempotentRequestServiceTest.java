package dev.idemkit.ports.service;

import static dev.idemkit.ports.contract.RequestFixtures.assertProblem;
import static dev.idemkit.ports.contract.RequestFixtures.bytes;
import static dev.idemkit.ports.contract.RequestFixtures.post;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.httpkey.ClientId;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.in.IdempotentRequests.Reply;
import dev.idemkit.ports.in.IdempotentRequests.Request;
import dev.idemkit.ports.forwarding.ForwardingIdempotencyRecords;
import dev.idemkit.ports.memory.InMemoryIdempotencyRecords;
import dev.idemkit.ports.out.IdempotencyRecords;
import dev.idemkit.ports.out.NoTransaction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * What only leased claims ({@link LeasedClaims} on {@link IdempotencyRecords}) have to get right: renewals, a claim
 * lost to a stall. The flow every store shares is {@code IdempotentRequestsContract}.
 */
class IdempotentRequestServiceTest {
    private static final ClientId ALICE = ClientId.of("alice");

    private final InMemoryIdempotencyRecords records = new InMemoryIdempotencyRecords();
    private final AtomicInteger executions = new AtomicInteger();

    @Test
    void aRequestSlowerThanItsLeaseKeepsItsKeyAndTheRetryWaitsForIt() throws Exception {
        KeyPolicy shortLease = KeyPolicy.defaults().withLease(Duration.ofMillis(300)).withWaitBound(Duration.ofSeconds(5));
        IdempotentRequestService<NoTransaction> leased = IdempotentRequestService.overRecords(records, shortLease);
        Request request = post(ALICE, "order-1", "{}");
        CountDownLatch started = new CountDownLatch(1);
        CompletableFuture<Reply> slow = CompletableFuture.supplyAsync(() -> leased.handle(request, work -> {
            started.countDown();
            Thread.sleep(1200); // four leases long
            return create();
        }));
        assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(700); // past the first lease: without renewal the retry would take the key over

        Reply retry = leased.handle(request, work -> create());
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
        IdempotentRequestService<NoTransaction> stalled = IdempotentRequestService.overRecords(noRenewals, shortLease);
        IdempotentRequestService<NoTransaction> other = IdempotentRequestService.overRecords(stalling, shortLease);
        Request request = post(ALICE, "order-1", "{}");
        CountDownLatch started = new CountDownLatch(1);
        CompletableFuture<Reply> slow = CompletableFuture.supplyAsync(() -> stalled.handle(request, work -> {
            started.countDown();
            Thread.sleep(800);
            return create();
        }));
        assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(400);
        Reply takeover = other.handle(request, work -> create());
        Reply late = slow.get(10, TimeUnit.SECONDS);

        assertThat(takeover.replayed()).isFalse();
        assertThat(late.response()).as("the key's one answer, not the late request's own").isEqualTo(takeover.response());
        assertThat(late.replayed()).isTrue();
        assertThat(stalled.handle(request, work -> create()).response()).isEqualTo(takeover.response());
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
        IdempotentRequestService<NoTransaction> stalled = IdempotentRequestService.overRecords(noRenewals,
                KeyPolicy.defaults().withLease(Duration.ofMillis(100)).withWaitBound(Duration.ofMillis(300)));
        Request request = post(ALICE, "order-1", "{}");
        Reply late = stalled.handle(request, work -> {
            Thread.sleep(400);
            return create();
        });
        assertThat(late.response().status()).isEqualTo(201);
        assertThat(stalled.handle(request, work -> create()).response()).isEqualTo(late.response());
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
        IdempotentRequestService<NoTransaction> stalled = IdempotentRequestService.overRecords(vanishing,
                KeyPolicy.defaults().withLease(Duration.ofMillis(100)).withWaitBound(Duration.ofMillis(300)));
        Reply late = stalled.handle(post(ALICE, "order-1", "{}"), work -> {
            Thread.sleep(400);
            return create();
        });
        assertProblem(late, 500, "idempotency-claim-lost");
    }

    @Test
    void credentialHeadersAreNeitherStoredNorReplayed() {
        IdempotentRequestService<NoTransaction> service = IdempotentRequestService.overRecords(records,
                KeyPolicy.defaults());
        Request request = post(ALICE, "order-cookie", "{}");
        Reply first = service.handle(request, work -> new StoredResponse(201, Map.of("Content-Type",
                "application/json", "Set-Cookie", "session=alice-secret", "WWW-Authenticate", "Bearer"), bytes("{}")));
        Reply replay = service.handle(request, work -> create());

        assertThat(replay.replayed()).isTrue();
        assertThat(replay.response().headers()).containsOnlyKeys("Content-Type");
        assertThat(first.response().headers()).containsOnlyKeys("Content-Type");
        assertThat(records.find(new ScopedKey(ALICE, new dev.idemkit.domain.httpkey.IdempotencyKey("order-cookie")))
                .map(r -> ((KeyRecord.Completed) r).response().headers().keySet())).hasValue(java.util.Set.of(
                        "Content-Type"));
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
}
