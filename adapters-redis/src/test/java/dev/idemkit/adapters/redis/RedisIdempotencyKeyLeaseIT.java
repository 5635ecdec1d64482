package dev.idemkit.adapters.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.ClientId;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.in.IdempotentRequests.Reply;
import dev.idemkit.ports.in.IdempotentRequests.Request;
import dev.idemkit.ports.out.IdempotencyRecords.Begin;
import dev.idemkit.ports.out.NoTransaction;
import dev.idemkit.ports.service.IdempotentRequestService;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Idempotency-Key on Redis across two app instances (two clients on one Redis): a request slower than its
 * lease keeps its key (renewed), and every expiry is Redis' own, so neither a slow request nor an instance's
 * clock can let a second charge run.
 */
class RedisIdempotencyKeyLeaseIT {
    private static RedisTestServer first;
    private static RedisTestServer second;

    @BeforeAll
    static void connect() {
        first = RedisTestServer.start("lease");
        second = RedisTestServer.start("lease", first.settings); // the same prefix: another instance of one app
    }

    @AfterAll
    static void cleanUp() {
        second.client.shutdown();
        first.close();
    }

    @Test
    void aRequestSlowerThanItsLeaseChargesOnceAcrossTwoInstances() throws Exception {
        KeyPolicy policy = KeyPolicy.defaults().withLease(Duration.ofMillis(500)).withWaitBound(Duration.ofSeconds(10));
        IdempotentRequestService<NoTransaction> a = IdempotentRequestService.overRecords(new RedisIdempotencyRecords(first.client,
                first.settings), policy);
        IdempotentRequestService<NoTransaction> b = IdempotentRequestService.overRecords(new RedisIdempotencyRecords(second.client,
                first.settings), policy);
        Request request = new Request(ClientId.of("client-" + UUID.randomUUID()), "pay-1", "POST", "/payments",
                "{\"amount\":150.00}".getBytes(StandardCharsets.UTF_8));
        AtomicInteger charges = new AtomicInteger();
        CountDownLatch charging = new CountDownLatch(1);
        CompletableFuture<Reply> slow = CompletableFuture.supplyAsync(() -> a.handle(request, work -> {
            charging.countDown();
            Thread.sleep(2000); // four leases
            return charge(charges);
        }));
        assertThat(charging.await(10, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(1000); // two leases in: without renewal the claim would have lapsed

        Reply retry = b.handle(request, work -> charge(charges));
        Reply original = slow.get(20, TimeUnit.SECONDS);
        assertThat(charges).as("charges").hasValue(1);
        assertThat(original.replayed()).isFalse();
        assertThat(retry.replayed()).isTrue();
        assertThat(retry.response()).isEqualTo(original.response());
    }

    @Test
    void aRecordLivesForItsLeaseOnRedisClockAndNoLonger() throws Exception {
        RedisIdempotencyRecords records = new RedisIdempotencyRecords(first.client, first.settings);
        ScopedKey key = ScopedKey.of("client-" + UUID.randomUUID(), "k");
        Instant before = Instant.now().minusSeconds(60);
        KeyRecord.InProgress claim = ((Begin.Claimed) records.tryBegin(key, Fingerprint.of("r"), "f-1",
                Duration.ofMillis(400))).claim();
        assertThat(claim.createdAt()).as("Redis' TIME").isAfter(before);
        assertThat(Duration.between(claim.createdAt(), claim.expiresAt())).isEqualTo(Duration.ofMillis(400));
        long ttl = first.pttl(first.settings.keyPrefix() + ":idem:{" + KeyLayout.enc(key.client().value()) + "."
                + KeyLayout.enc("k") + "}");
        assertThat(ttl).as("the key's TTL is the lease").isBetween(1L, 400L);
        Thread.sleep(600);
        assertThat(records.find(key)).isEmpty();
        assertThat(records.complete(key, claim, new StoredResponse(200, Map.of(), new byte[0]), Duration.ofHours(1)))
                .as("a lapsed claim completes nothing").isFalse();
    }

    private static StoredResponse charge(AtomicInteger charges) {
        return new StoredResponse(201, Map.of("Content-Type", "application/json"),
                ("{\"charge\":" + charges.incrementAndGet() + ",\"id\":\"" + UUID.randomUUID() + "\"}")
                        .getBytes(StandardCharsets.UTF_8));
    }
}
