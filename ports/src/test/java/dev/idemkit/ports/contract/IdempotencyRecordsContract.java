package dev.idemkit.ports.contract;

import static dev.idemkit.ports.contract.ContractGenerators.fresh;
import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.ClientId;
import dev.idemkit.domain.httpkey.IdempotencyKey;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.contract.ContractGenerators.RecordOp;
import dev.idemkit.ports.out.IdempotencyRecords;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link IdempotencyRecords} passes unchanged: claim when absent or expired, the live
 * record otherwise, complete and replay byte for byte, release, client scoping, bounded purge, one key
 * raced by many threads, and random operation histories against a simple model.
 *
 * <p>Time is never read from a clock: every instant is passed in, in January 2001 with millisecond
 * precision (exact in stores that keep micro- or milliseconds), so {@code purgeExpired} here never
 * touches records written with a real clock. Client ids are fresh per test and per example.
 */
public abstract class IdempotencyRecordsContract {
    protected static final int EXAMPLES = 1000;
    private static final Instant BASE = Instant.parse("2001-01-01T00:00:00Z");
    private static final int SHRINK_CYCLES = 200;
    private static final int THREADS = 16;
    private static final int RACE_ROUNDS = 10;

    protected abstract IdempotencyRecords records();

    @Test
    void tryBeginClaimsAnAbsentKey() {
        ScopedKey key = freshKey();
        Instant now = start();
        KeyRecord.InProgress running = running("a", now, 60);
        assertThat(records().tryBegin(key, running, now)).isEmpty();
        assertThat(records().find(key)).contains(running);
    }

    @Test
    void tryBeginReturnsTheLiveRecordOfAnotherRequest() {
        ScopedKey key = freshKey();
        Instant now = start();
        KeyRecord.InProgress first = running("a", now, 60);
        records().tryBegin(key, first, now);
        Instant later = now.plusSeconds(59);
        assertThat(records().tryBegin(key, running("a", later, 60), later)).contains(first);
        assertThat(records().tryBegin(key, running("b", later, 60), later)).contains(first);
        assertThat(records().find(key)).contains(first);
    }

    @Test
    void tryBeginClaimsAgainOnceTheRecordExpired() {
        ScopedKey key = freshKey();
        Instant now = start();
        records().tryBegin(key, running("a", now, 10), now);
        Instant expiry = now.plusSeconds(10);
        KeyRecord.InProgress second = running("a", expiry, 10);
        assertThat(records().tryBegin(key, second, expiry)).as("a record is expired at its expiry instant").isEmpty();
        assertThat(records().find(key)).contains(second);
    }

    @Test
    void completedResponseIsFoundByteForByte() {
        ScopedKey key = freshKey();
        Instant now = start();
        KeyRecord.InProgress running = running("a", now, 60);
        records().tryBegin(key, running, now);
        byte[] text = "ação ✓ €".getBytes(StandardCharsets.UTF_8);
        byte[] body = new byte[256 + text.length];
        for (int i = 0; i < 256; i++) {
            body[i] = (byte) i;
        }
        System.arraycopy(text, 0, body, 256, text.length);
        StoredResponse response = new StoredResponse(201,
                Map.of("Content-Type", "application/json; charset=utf-8", "Location", "/orders/42"), body);
        KeyRecord.Completed done = new KeyRecord.Completed(running.fingerprint(), response, now, now.plusSeconds(3600));

        assertThat(records().complete(key, done)).isTrue();
        Optional<KeyRecord> found = records().find(key);
        assertThat(found).contains(done);
        assertThat(((KeyRecord.Completed) found.get()).response().body()).isEqualTo(body);
        Instant later = now.plusSeconds(30);
        assertThat(records().tryBegin(key, running("a", later, 60), later)).contains(done);
    }

    @Test
    void completeFailsWhenTheClaimWasLost() {
        ScopedKey key = freshKey();
        Instant now = start();
        KeyRecord.InProgress slow = running("a", now, 10);
        records().tryBegin(key, slow, now);
        Instant later = now.plusSeconds(11);
        KeyRecord.InProgress takeover = running("a", later, 10);
        records().tryBegin(key, takeover, later);

        assertThat(records().complete(key, completed(slow, 200, later))).isFalse();
        assertThat(records().find(key)).contains(takeover);
        records().release(key, slow);
        assertThat(records().find(key)).as("a stale release leaves the new holder's claim").contains(takeover);
    }

    @Test
    void releaseLetsTheNextRequestClaim() {
        ScopedKey key = freshKey();
        Instant now = start();
        KeyRecord.InProgress running = running("a", now, 60);
        records().tryBegin(key, running, now);
        records().release(key, running);
        assertThat(records().find(key)).isEmpty();
        Instant later = now.plusSeconds(1);
        KeyRecord.InProgress retry = running("a", later, 60);
        assertThat(records().tryBegin(key, retry, later)).isEmpty();
        assertThat(records().find(key)).contains(retry);
    }

    @Test
    void sameKeyOfTwoClientsIsTwoIndependentRecords() {
        IdempotencyKey value = new IdempotencyKey("order-42");
        ScopedKey alice = new ScopedKey(ClientId.of(fresh("alice")), value);
        ScopedKey bob = new ScopedKey(ClientId.of(fresh("bob")), value);
        Instant now = start();
        KeyRecord.InProgress forAlice = running("alice's request", now, 60);
        KeyRecord.InProgress forBob = running("bob's request", now, 60);

        assertThat(records().tryBegin(alice, forAlice, now)).isEmpty();
        assertThat(records().tryBegin(bob, forBob, now)).isEmpty();
        assertThat(records().complete(alice, completed(forAlice, 201, now))).isTrue();
        assertThat(records().find(bob)).contains(forBob);
        records().release(bob, forBob);
        assertThat(records().find(alice)).contains(completed(forAlice, 201, now));
        assertThat(records().find(bob)).isEmpty();
    }

    @Test
    void purgeDeletesOnlyExpiredRecordsAndAtMostABatch() {
        ClientId client = ClientId.of(fresh("client"));
        Instant now = start();
        List<ScopedKey> expired = new ArrayList<>();
        List<ScopedKey> live = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ScopedKey key = new ScopedKey(client, new IdempotencyKey("expired-" + i));
            KeyRecord.InProgress r = running("e" + i, now, 1);
            records().tryBegin(key, r, now);
            if (i % 2 == 0) {
                records().complete(key, new KeyRecord.Completed(r.fingerprint(), response(200), now, now.plusSeconds(2)));
            }
            expired.add(key);
        }
        for (int i = 0; i < 3; i++) {
            ScopedKey key = new ScopedKey(client, new IdempotencyKey("live-" + i));
            KeyRecord.InProgress r = running("l" + i, now, 10 * 24 * 3600);
            records().tryBegin(key, r, now);
            if (i == 0) {
                records().complete(key, new KeyRecord.Completed(r.fingerprint(), response(200), now, r.expiresAt()));
            }
            live.add(key);
        }
        Instant purgeAt = now.plusSeconds(3600);

        assertThat(records().purgeExpired(purgeAt, 2)).as("bounded by the batch size").isEqualTo(2);
        for (int rounds = 0; records().purgeExpired(purgeAt, 1000) > 0; rounds++) {
            assertThat(rounds).as("purge rounds").isLessThan(10_000);
        }
        expired.forEach(key -> assertThat(records().find(key)).as("expired %s", key.key()).isEmpty());
        live.forEach(key -> assertThat(records().find(key)).as("live %s", key.key()).isPresent());
        assertThat(records().purgeExpired(purgeAt, 1000)).isZero();
    }

    @Test
    void manyThreadsBeginningOneKeyLetExactlyOneClaimIt() {
        for (int round = 0; round < RACE_ROUNDS; round++) {
            ScopedKey key = freshKey();
            Instant now = start();
            List<KeyRecord.InProgress> mine = new ArrayList<>();
            for (int i = 0; i < THREADS; i++) {
                mine.add(running("same request", now.plusMillis(i), 60));
            }
            List<Optional<KeyRecord>> results = Race.run(THREADS, i -> records().tryBegin(key, mine.get(i), now.plusMillis(i)));
            assertThat(results.stream().filter(Optional::isEmpty).count()).as("round %d: claims", round).isEqualTo(1);
            KeyRecord winner = mine.get(results.indexOf(Optional.empty()));
            assertThat(results).as("round %d: what the losers saw", round).containsOnly(Optional.empty(), Optional.of(winner));
            assertThat(records().find(key)).contains(winner);
        }
    }

    /** Law: any history of begin, complete, release, find, purge and passing time gives the results and records of a simple map model. */
    @Test
    void randomOperationHistoriesMatchTheModel() {
        qt().withExamples(EXAMPLES).withShrinkCycles(SHRINK_CYCLES).forAll(ContractGenerators.recordHistories())
                .checkAssert(this::matchesTheModel);
    }

    private void matchesTheModel(List<RecordOp> history) {
        List<ScopedKey> keys = new ArrayList<>();
        for (ClientId client : List.of(ClientId.of(fresh("client")), ClientId.of(fresh("client")))) {
            keys.add(new ScopedKey(client, new IdempotencyKey("key-a")));
            keys.add(new ScopedKey(client, new IdempotencyKey("key-b")));
        }
        Map<ScopedKey, KeyRecord> model = new HashMap<>();
        Map<ScopedKey, KeyRecord.InProgress> held = new HashMap<>();
        Instant now = start();
        List<Object> expected = new ArrayList<>();
        List<Object> actual = new ArrayList<>();
        for (RecordOp op : history) {
            ScopedKey key = keys.get(op.key());
            KeyRecord current = model.get(key);
            switch (op.kind()) {
                case BEGIN -> {
                    KeyRecord.InProgress running = running("request-" + op.variant(), now, op.seconds());
                    if (current == null || current.isExpired(now)) {
                        model.put(key, running);
                        expected.add(Optional.empty());
                    } else {
                        expected.add(Optional.of(current));
                    }
                    Optional<KeyRecord> got = records().tryBegin(key, running, now);
                    actual.add(got);
                    if (got.isEmpty()) {
                        held.put(key, running);
                    }
                }
                case COMPLETE -> {
                    KeyRecord.InProgress claim = held.getOrDefault(key, running("request-" + op.variant(), now, 60));
                    KeyRecord.Completed done = completed(claim, 200 + op.variant(), now);
                    boolean holds = holds(current, claim);
                    if (holds) {
                        model.put(key, done);
                    }
                    expected.add(holds);
                    actual.add(records().complete(key, done));
                }
                case RELEASE -> {
                    KeyRecord.InProgress claim = held.getOrDefault(key, running("request-" + op.variant(), now, 60));
                    if (holds(current, claim)) {
                        model.remove(key);
                    }
                    records().release(key, claim);
                }
                case FIND -> {
                    expected.add(Optional.ofNullable(current));
                    actual.add(records().find(key));
                }
                case ADVANCE -> now = now.plusSeconds(op.seconds());
                case PURGE -> {
                    Instant at = now;
                    model.values().removeIf(r -> r.isExpired(at));
                    while (records().purgeExpired(now, 1000) > 0) {
                        // other examples' expired records may be purged too; loop until none is left
                    }
                }
            }
        }
        assertThat(actual).as("results of %s", history).isEqualTo(expected);
        for (ScopedKey key : keys) {
            assertThat(records().find(key)).as("record %s after %s", key, history)
                    .isEqualTo(Optional.ofNullable(model.get(key)));
        }
    }

    private static boolean holds(KeyRecord current, KeyRecord.InProgress claim) {
        return current instanceof KeyRecord.InProgress p && p.fingerprint().equals(claim.fingerprint())
                && p.createdAt().equals(claim.createdAt());
    }

    private static ScopedKey freshKey() {
        return new ScopedKey(ClientId.of(fresh("client")), new IdempotencyKey("key-" + ThreadLocalRandom.current().nextInt(1000)));
    }

    /** A start instant in January 2001, on a whole millisecond. */
    private static Instant start() {
        return BASE.plusMillis(ThreadLocalRandom.current().nextLong(24L * 3600 * 1000));
    }

    private static KeyRecord.InProgress running(String request, Instant now, long ttlSeconds) {
        return new KeyRecord.InProgress(Fingerprint.of(request), now, now.plusSeconds(ttlSeconds));
    }

    private static KeyRecord.Completed completed(KeyRecord.InProgress claim, int status, Instant now) {
        return new KeyRecord.Completed(claim.fingerprint(), response(status), claim.createdAt(), now.plusSeconds(3600));
    }

    private static StoredResponse response(int status) {
        return new StoredResponse(status, Map.of("Content-Type", "application/json"),
                ("{\"status\":" + status + "}").getBytes(StandardCharsets.UTF_8));
    }
}
