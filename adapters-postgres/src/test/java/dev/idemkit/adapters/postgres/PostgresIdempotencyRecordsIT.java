package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** PostgreSQL specifics of the Idempotency-Key records beyond the contract suite. */
class PostgresIdempotencyRecordsIT {
    private static final Instant T0 = Instant.parse("2026-01-01T10:00:00.123456Z");
    private static TestDatabase pg;
    private static PostgresIdempotencyRecords records;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start();
        records = new PostgresIdempotencyRecords(pg.db());
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    @Test
    void aCompletedResponseComesBackByteForByteWithItsHeaders() {
        ScopedKey key = ScopedKey.of("client-" + UUID.randomUUID(), "k1");
        KeyRecord.InProgress running = new KeyRecord.InProgress(Fingerprint.of("req"), T0, T0.plusSeconds(60));
        byte[] body = {0, 1, 2, (byte) 0xff, '"', '\\', '\n'};
        StoredResponse response = new StoredResponse(201, Map.of("Content-Type", "application/json",
                "Location", "/orders/1?x=\"y\""), body);

        assertThat(records.tryBegin(key, running, T0)).isEmpty();
        assertThat(records.complete(key, new KeyRecord.Completed(running.fingerprint(), response, T0, T0.plusSeconds(3600))))
                .isTrue();

        KeyRecord found = records.find(key).orElseThrow();
        assertThat(found).isInstanceOf(KeyRecord.Completed.class);
        assertThat(((KeyRecord.Completed) found).response()).isEqualTo(response);
        assertThat(found.createdAt()).isEqualTo(T0);
        assertThat(pg.queryLong("SELECT count(*) FROM idempotency_records WHERE headers ->> 'Location' = ?",
                "/orders/1?x=\"y\"")).isOne();
    }

    @Test
    void completeFailsWhenTheClaimExpiredAndWasTakenOver() {
        ScopedKey key = ScopedKey.of("client-" + UUID.randomUUID(), "k2");
        KeyRecord.InProgress first = new KeyRecord.InProgress(Fingerprint.of("req"), T0, T0.plusSeconds(10));
        Instant later = T0.plusSeconds(11);
        KeyRecord.InProgress second = new KeyRecord.InProgress(Fingerprint.of("req"), later, later.plusSeconds(10));
        StoredResponse ok = new StoredResponse(200, Map.of(), new byte[] {1});

        assertThat(records.tryBegin(key, first, T0)).isEmpty();
        assertThat(records.tryBegin(key, second, later)).as("expired claim is taken over").isEmpty();
        assertThat(records.complete(key, new KeyRecord.Completed(first.fingerprint(), ok, T0, later))).isFalse();
        records.release(key, first);
        assertThat(records.find(key)).contains(second);
    }

    @Test
    void purgeDeletesExpiredRecordsInBoundedBatchesAndKeepsLiveOnes() {
        String client = "client-" + UUID.randomUUID();
        for (int i = 0; i < 7; i++) {
            records.tryBegin(ScopedKey.of(client, "old-" + i),
                    new KeyRecord.InProgress(Fingerprint.of("r"), T0, T0.plus(Duration.ofMinutes(1))), T0);
        }
        ScopedKey live = ScopedKey.of(client, "live");
        records.tryBegin(live, new KeyRecord.InProgress(Fingerprint.of("r"), T0, T0.plus(Duration.ofDays(1))), T0);
        Instant now = T0.plus(Duration.ofHours(1));

        assertThat(records.purgeExpired(now, 3)).isEqualTo(3);
        assertThat(records.purgeExpired(now, 3)).isEqualTo(3);
        assertThat(records.purgeExpired(now, 3)).isEqualTo(1);
        assertThat(records.purgeExpired(now, 3)).isZero();
        assertThat(records.find(live)).isPresent();
    }
}
