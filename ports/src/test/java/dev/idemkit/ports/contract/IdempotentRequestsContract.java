package dev.idemkit.ports.contract;

import static dev.idemkit.ports.contract.RequestFixtures.assertProblem;
import static dev.idemkit.ports.contract.RequestFixtures.bytes;
import static dev.idemkit.ports.contract.RequestFixtures.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.httpkey.ClientId;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.in.IdempotentRequests.Reply;
import dev.idemkit.ports.in.IdempotentRequests.Request;
import dev.idemkit.ports.out.IdempotencyClaims;
import dev.idemkit.ports.out.UnitOfWork;
import dev.idemkit.ports.service.IdempotentRequestService;
import dev.idemkit.ports.service.ReplayCache;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The one Idempotency-Key flow ({@link IdempotentRequestService}) on a store's atomic step ({@link IdempotencyClaims}):
 * every store runs this suite unchanged — the in-memory reference, PostgreSQL (effect in the claim's transaction) and
 * Redis (leased claims) — and deliberately broken stores fail it ({@code ContractSuitesBiteTest}).
 *
 * <p>Each test uses fresh clients, so the suite passes on a store that keeps what earlier runs wrote.
 *
 * @param <U> the store's unit of work
 */
public abstract class IdempotentRequestsContract<U extends UnitOfWork> {
    private final AtomicInteger executions = new AtomicInteger();

    /** The store's atomic step under test. */
    protected abstract IdempotencyClaims<U> claims();

    /** A write of the request's effect through {@code work}, counted under {@code tag}. */
    protected abstract void recordEffect(U work, String tag) throws Exception;

    /** How many effects under {@code tag} the store kept (committed). */
    protected abstract long keptEffects(String tag);

    /**
     * Whether the effect commits and rolls back with the key (PostgreSQL; Redis' staged writes) or runs on its own
     * (leased claims without a unit of work).
     */
    protected abstract boolean effectSharesTheClaimsTransaction();

    /**
     * Whether others see the claim while the effect runs: a leased claim is written before the effect (also when the
     * effect's writes are staged), an uncommitted PostgreSQL claim is not.
     */
    protected boolean claimVisibleWhileTheEffectRuns() {
        return !effectSharesTheClaimsTransaction();
    }

    /** Same-key requests racing in {@link #parallelSameKeyRequestsRunOnceAndAllGetTheFirstsResponse}. */
    protected int parallelism() {
        return 20;
    }

    /** Without the replay cache: every answer here comes from the store under test. */
    private IdempotentRequestService<U> service(KeyPolicy policy) {
        return new IdempotentRequestService<>(claims(), policy, ReplayCache.none());
    }

    private IdempotentRequestService<U> service() {
        return service(KeyPolicy.defaults());
    }

    @Test
    void parallelSameKeyRequestsRunOnceAndAllGetTheFirstsResponse() {
        String tag = fresh("race");
        Request request = post(client(), "order-1", "{\"amount\":10}");
        IdempotentRequestService<U> service = service();
        List<Reply> replies = Race.run(parallelism(), i -> service.handle(request, work -> {
            StoredResponse r = create(work, tag);
            Thread.sleep(200);
            return r;
        }));

        assertThat(executions).as("executions").hasValue(1);
        assertThat(keptEffects(tag)).as("effects kept").isEqualTo(1);
        StoredResponse first = replies.get(0).response();
        assertThat(replies).allSatisfy(r -> {
            assertThat(r.response().status()).isEqualTo(201);
            assertThat(r.response()).isEqualTo(first);
        });
        assertThat(replies.stream().filter(Reply::replayed).count()).isEqualTo(parallelism() - 1);
    }

    @Test
    void aRetryAfterCompletionReplaysTheStoredResponseByteForByte() {
        String tag = fresh("retry");
        Request request = post(client(), "order-1", "{\"amount\":10}");
        Reply first = service().handle(request, work -> create(work, tag));
        Reply retry = service().handle(request, work -> create(work, tag));

        assertThat(first.replayed()).isFalse();
        assertThat(retry.replayed()).isTrue();
        assertThat(retry.response()).isEqualTo(first.response());
        assertThat(retry.response().headers()).isEqualTo(first.response().headers());
        assertThat(keptEffects(tag)).isEqualTo(1);
    }

    @Test
    void theSameKeyForAnotherBodyIs422AndRunsNothing() {
        String tag = fresh("reuse");
        ClientId client = client();
        service().handle(post(client, "order-1", "{\"amount\":10}"), work -> create(work, tag));
        Reply other = service().handle(post(client, "order-1", "{\"amount\":99}"), work -> create(work, tag));

        assertProblem(other, 422, "idempotency-key-reused");
        assertThat(executions).hasValue(1);
        assertThat(keptEffects(tag)).isEqualTo(1);
    }

    @Test
    void aMissingOrMalformedKeyIs400AndRunsNothing() {
        String tag = fresh("bad-key");
        for (String header : new String[] {null, "", "has space", "\"unterminated", "k".repeat(256), "ação"}) {
            assertProblem(service().handle(post(client(), header, "{}"), work -> create(work, tag)), 400,
                    "invalid-idempotency-key");
        }
        assertThat(executions).hasValue(0);
        assertThat(keptEffects(tag)).isZero();
    }

    @Test
    void aQuotedKeyIsTheSameKeyAsTheBareOne() {
        String tag = fresh("quoted");
        ClientId client = client();
        service().handle(post(client, "order-1", "{}"), work -> create(work, tag));
        Reply quoted = service().handle(post(client, "\"order-1\"", "{}"), work -> create(work, tag));

        assertThat(quoted.replayed()).isTrue();
        assertThat(executions).hasValue(1);
    }

    @Test
    void aServerErrorReleasesTheKeySoThatTheRetryRuns() {
        String tag = fresh("5xx");
        Request request = post(client(), "order-1", "{}");
        Reply failed = service().handle(request, work -> {
            recordEffect(work, tag);
            executions.incrementAndGet();
            return new StoredResponse(503, Map.of(), bytes("try later"));
        });
        assertThat(failed.response().status()).isEqualTo(503);
        assertThat(keptEffects(tag)).as("the failed request's effect").isEqualTo(effectSharesTheClaimsTransaction() ? 0 : 1);

        Reply retry = service().handle(request, work -> create(work, tag));
        assertThat(retry.replayed()).isFalse();
        assertThat(retry.response().status()).isEqualTo(201);
        assertThat(service().handle(request, work -> create(work, tag)).replayed()).isTrue();
        assertThat(executions).hasValue(2);
    }

    @Test
    void anExceptionReachesTheCallerAndReleasesTheKeySoThatTheRetryRuns() {
        String tag = fresh("throw");
        Request request = post(client(), "order-1", "{}");
        IllegalStateException crash = new IllegalStateException("handler crashed");
        assertThatThrownBy(() -> service().handle(request, work -> {
            recordEffect(work, tag);
            throw crash;
        })).isSameAs(crash);
        assertThat(keptEffects(tag)).as("the crashed request's effect").isEqualTo(effectSharesTheClaimsTransaction() ? 0 : 1);

        assertThat(service().handle(request, work -> create(work, tag)).replayed()).isFalse();
        assertThat(executions).hasValue(1);
    }

    @Test
    void aRequestWaitingLongerThanTheBoundGets409AndTheFirstStillCompletes() throws Exception {
        String tag = fresh("busy");
        IdempotentRequestService<U> impatient = service(KeyPolicy.defaults().withWaitBound(Duration.ofMillis(300)));
        Request request = post(client(), "order-1", "{}");
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        CompletableFuture<Reply> first = CompletableFuture.supplyAsync(() -> impatient.handle(request, work -> {
            started.countDown();
            finish.await(20, TimeUnit.SECONDS);
            return create(work, tag);
        }));
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

        assertProblem(impatient.handle(request, work -> create(work, tag)), 409, "request-in-progress");
        finish.countDown();
        assertThat(first.get(20, TimeUnit.SECONDS).response().status()).isEqualTo(201);
        assertThat(impatient.handle(request, work -> create(work, tag)).replayed()).isTrue();
        assertThat(executions).hasValue(1);
    }

    @Test
    void withoutAnyWaitASecondRequestForARunningKeyIs409AtOnce() throws Exception {
        String tag = fresh("no-wait");
        IdempotentRequestService<U> impatient = service(KeyPolicy.defaults().withWaitBound(Duration.ZERO));
        Request request = post(client(), "order-1", "{}");
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        CompletableFuture<Reply> first = CompletableFuture.supplyAsync(() -> impatient.handle(request, work -> {
            started.countDown();
            finish.await(20, TimeUnit.SECONDS);
            return create(work, tag);
        }));
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

        Reply second = impatient.handle(request, work -> create(work, tag));
        finish.countDown();

        assertProblem(second, 409, "request-in-progress");
        assertThat(second.response().headers()).as("when to retry").containsEntry("Retry-After", "1");
        assertThat(first.get(20, TimeUnit.SECONDS).response().status()).isEqualTo(201);
        assertThat(executions).hasValue(1);
    }

    @Test
    void aStoredResponseOutlivesTheClaimsLeaseAndIsReplayedForItsWholeTtl() throws Exception {
        String tag = fresh("ttl");
        IdempotentRequestService<U> shortLease = service(KeyPolicy.defaults().withLease(Duration.ofMillis(200)));
        Request request = post(client(), "order-1", "{}");
        Reply first = shortLease.handle(request, work -> create(work, tag));
        Thread.sleep(600); // three leases: a response kept only for the lease would be gone

        Reply retry = shortLease.handle(request, work -> create(work, tag));

        assertThat(retry.replayed()).isTrue();
        assertThat(retry.response()).isEqualTo(first.response());
        assertThat(executions).hasValue(1);
    }

    @Test
    void whileTheEffectRunsTheClaimIsVisibleToOthersOnlyWhereTheEffectRunsOnItsOwn() {
        String tag = fresh("visible");
        ClientId client = client();
        ScopedKey key = ScopedKey.of(client.value(), "order-1");
        AtomicReference<Optional<KeyRecord>> seenByOthers = new AtomicReference<>();
        service().handle(post(client, "order-1", "{}"), work -> {
            seenByOthers.set(claims().find(key));
            return create(work, tag);
        });

        if (!claimVisibleWhileTheEffectRuns()) {
            assertThat(seenByOthers.get()).as("an uncommitted claim: a crash mid-effect leaves no record").isEmpty();
        } else {
            assertThat(seenByOthers.get()).as("a leased claim, held while the effect runs")
                    .hasValueSatisfying(r -> assertThat(r).isInstanceOf(KeyRecord.InProgress.class));
        }
        assertThat(claims().find(key)).hasValueSatisfying(r -> assertThat(r).isInstanceOf(KeyRecord.Completed.class));
    }

    @Test
    void twoClientsWithTheSameKeyValueRunTwice() {
        String tag = fresh("clients");
        Reply alice = service().handle(post(client(), "order-1", "{}"), work -> create(work, tag));
        Reply bob = service().handle(post(client(), "order-1", "{}"), work -> create(work, tag));

        assertThat(executions).hasValue(2);
        assertThat(alice.replayed()).isFalse();
        assertThat(bob.replayed()).isFalse();
        assertThat(bob.response().body()).isNotEqualTo(alice.response().body());
        assertThat(keptEffects(tag)).isEqualTo(2);
    }

    @Test
    void anOptionalKeyLeftOutRunsEveryTimeAndA5xxWithoutAKeyKeepsNothingWhereTheStoreRollsBack() {
        String tag = fresh("no-key");
        IdempotentRequestService<U> optional = service(new KeyPolicy(Duration.ofHours(24), Duration.ofSeconds(10),
                KeyPolicy.Requirement.OPTIONAL));
        optional.handle(post(client(), null, "{}"), work -> create(work, tag));
        optional.handle(post(client(), null, "{}"), work -> create(work, tag));
        Reply failed = optional.handle(post(client(), null, "{}"), work -> {
            recordEffect(work, tag);
            return new StoredResponse(500, Map.of(), bytes("boom"));
        });

        assertThat(executions).hasValue(2);
        assertThat(failed.response().status()).isEqualTo(500);
        assertThat(keptEffects(tag)).isEqualTo(effectSharesTheClaimsTransaction() ? 2 : 3);
    }

    private StoredResponse create(U work, String tag) throws Exception {
        recordEffect(work, tag);
        executions.incrementAndGet();
        return new StoredResponse(201, Map.of("Content-Type", "application/json", "Location", "/orders/" + tag),
                bytes("{\"id\":\"" + UUID.randomUUID() + "\"}"));
    }

    private static ClientId client() {
        return ClientId.of(fresh("client"));
    }

    private static String fresh(String what) {
        return what + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

}
