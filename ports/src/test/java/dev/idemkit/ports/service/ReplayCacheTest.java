package dev.idemkit.ports.service;

import static dev.idemkit.ports.contract.RequestFixtures.assertProblem;
import static dev.idemkit.ports.contract.RequestFixtures.bytes;
import static dev.idemkit.ports.contract.RequestFixtures.post;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.ClientId;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.in.IdempotentRequests.Reply;
import dev.idemkit.ports.in.IdempotentRequests.Request;
import dev.idemkit.ports.memory.InMemoryIdempotencyRecords;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.IdempotencyClaims;
import dev.idemkit.ports.out.NoTransaction;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Replays of completed responses from this process's memory: never an in-progress record, never past its life. */
class ReplayCacheTest {
    private final AtomicLong now = new AtomicLong();
    private final ReplayCache cache = new ReplayCache(3, Duration.ofSeconds(60), now::get);
    private final AtomicInteger attempts = new AtomicInteger();
    private final AtomicInteger executions = new AtomicInteger();
    private final LeasedClaims<NoTransaction> leased = LeasedClaims.over(new InMemoryIdempotencyRecords());
    /** The store, counting how often the flow reaches it. */
    private final IdempotencyClaims<NoTransaction> counting = new IdempotencyClaims<>() {
        @Override
        public Attempt attempt(ScopedKey key, Fingerprint fingerprint, KeyPolicy policy, Duration wait,
                Effect<? super NoTransaction, StoredResponse> effect) {
            attempts.incrementAndGet();
            return leased.attempt(key, fingerprint, policy, wait, effect);
        }

        @Override
        public StoredResponse runWithoutKey(Effect<? super NoTransaction, StoredResponse> effect) {
            return leased.runWithoutKey(effect);
        }

        @Override
        public Optional<KeyRecord> find(ScopedKey key) {
            return leased.find(key);
        }
    };
    private final IdempotentRequestService<NoTransaction> service = new IdempotentRequestService<>(counting,
            KeyPolicy.defaults(), cache);

    private StoredResponse create() {
        executions.incrementAndGet();
        return new StoredResponse(201, Map.of("Content-Type", "application/json"),
                bytes("{\"id\":\"" + UUID.randomUUID() + "\"}"));
    }

    @Test
    void aReplayOfAResponseThisProcessSawCompleteDoesNotReachTheStore() {
        Request request = post(ClientId.of("alice"), "k-1", "{\"a\":1}");
        Reply first = service.handle(request, work -> create());
        Reply second = service.handle(request, work -> create());
        Reply third = service.handle(request, work -> create());

        assertThat(attempts).as("store attempts").hasValue(1);
        assertThat(executions).hasValue(1);
        assertThat(second.replayed()).isTrue();
        assertThat(third.response()).isEqualTo(first.response());
    }

    @Test
    void anotherBodyUnderACachedKeyIs422() {
        ClientId alice = ClientId.of("alice");
        service.handle(post(alice, "k-1", "{\"a\":1}"), work -> create());
        assertProblem(service.handle(post(alice, "k-1", "{\"a\":2}"), work -> create()), 422, "idempotency-key-reused");
        assertThat(executions).hasValue(1);
    }

    @Test
    void serverErrorsAreNotCachedAndTheRetryRuns() {
        Request request = post(ClientId.of("alice"), "k-1", "{}");
        service.handle(request, work -> new StoredResponse(503, Map.of(), bytes("later")));
        Reply retry = service.handle(request, work -> create());

        assertThat(retry.replayed()).isFalse();
        assertThat(retry.response().status()).isEqualTo(201);
        assertThat(executions).hasValue(1);
    }

    @Test
    void anEntryPastItsLifetimeIsReadFromTheStoreAgain() {
        Request request = post(ClientId.of("alice"), "k-1", "{}");
        service.handle(request, work -> create());
        now.addAndGet(Duration.ofSeconds(61).toNanos());

        Reply replay = service.handle(request, work -> create());

        assertThat(replay.replayed()).isTrue();
        assertThat(attempts).as("the second reached the store").hasValue(2);
        assertThat(executions).hasValue(1);
    }

    @Test
    void theCacheIsBoundedAndKeysAreScopedPerClient() {
        for (int i = 0; i < 5; i++) {
            service.handle(post(ClientId.of("alice"), "k-" + i, "{}"), work -> create());
        }
        assertThat(cache.size()).isEqualTo(3);
        Reply bob = service.handle(post(ClientId.of("bob"), "k-4", "{}"), work -> create());
        assertThat(bob.replayed()).as("bob's key is bob's").isFalse();
        assertThat(executions).hasValue(6);
    }
}
