package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.out.IdempotencyRecords.Begin;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** PostgreSQL specifics of the Idempotency-Key records beyond the contract suite. */
class PostgresIdempotencyRecordsIT {
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
    void aCompletedResponseComesBackByteForByteWithItsHeadersAndTheDatabasesTimes() {
        ScopedKey key = ScopedKey.of("client-" + UUID.randomUUID(), "k1");
        byte[] body = {0, 1, 2, (byte) 0xff, '"', '\\', '\n'};
        StoredResponse response = new StoredResponse(201, Map.of("Content-Type", "application/json",
                "Location", "/orders/1?x=\"y\""), body);
        Instant before = Instant.now().minusSeconds(5);

        KeyRecord.InProgress claim = ((Begin.Claimed) records.tryBegin(key, Fingerprint.of("req"), "f-1",
                Duration.ofSeconds(60))).claim();
        assertThat(claim.createdAt()).isAfter(before);
        assertThat(Duration.between(claim.createdAt(), claim.expiresAt())).isEqualTo(Duration.ofSeconds(60));
        assertThat(records.complete(key, claim, response, Duration.ofHours(1))).isTrue();

        KeyRecord found = records.find(key).orElseThrow();
        assertThat(found).isInstanceOf(KeyRecord.Completed.class);
        assertThat(((KeyRecord.Completed) found).response()).isEqualTo(response);
        assertThat(found.createdAt()).isEqualTo(claim.createdAt());
        assertThat(found.expiresAt()).isAfter(claim.createdAt().plus(Duration.ofMinutes(59)));
        assertThat(pg.queryLong("SELECT count(*) FROM idempotency_records WHERE headers ->> 'Location' = ?",
                "/orders/1?x=\"y\"")).isOne();
    }

    @Test
    void anExpiryIsTheDatabasesToDecideWhateverACallersClockSays() throws Exception {
        ScopedKey key = ScopedKey.of("client-" + UUID.randomUUID(), "k2");
        KeyRecord.InProgress claim = ((Begin.Claimed) records.tryBegin(key, Fingerprint.of("req"), "f-1",
                Duration.ofHours(1))).claim();
        // nothing a caller passes can make a live claim look expired: there is no caller's time to pass
        assertThat(records.tryBegin(key, Fingerprint.of("req"), "f-2", Duration.ofHours(1))).isInstanceOf(Begin.Held.class);
        // moved into the past on the database's clock, it is expired at once
        try (Connection c = pg.connection(); PreparedStatement ps = c.prepareStatement(
                "UPDATE idempotency_records SET expires_at = clock_timestamp() - interval '1 second'"
                        + " WHERE client_id = ? AND idem_key = ?")) {
            ps.setString(1, key.client().value());
            ps.setString(2, key.key().value());
            ps.executeUpdate();
            c.commit();
        }
        assertThat(records.find(key)).isEmpty();
        KeyRecord.InProgress next = ((Begin.Claimed) records.tryBegin(key, Fingerprint.of("req"), "f-3",
                Duration.ofHours(1))).claim();
        assertThat(records.complete(key, claim, new StoredResponse(200, Map.of(), new byte[0]), Duration.ofHours(1)))
                .as("the lapsed claim, taken over, completes nothing").isFalse();
        assertThat(records.find(key)).hasValueSatisfying(r -> assertThat(((KeyRecord.InProgress) r).sameClaim(next))
                .isTrue());
    }

    @Test
    void aClaimWhoseLeaseLapsedButThatNobodyTookStillCompletes() throws Exception {
        ScopedKey key = ScopedKey.of("client-" + UUID.randomUUID(), "k3");
        KeyRecord.InProgress claim = ((Begin.Claimed) records.tryBegin(key, Fingerprint.of("req"), "f-1",
                Duration.ofMillis(1))).claim();
        Thread.sleep(20);
        assertThat(records.find(key)).isEmpty();
        // the request finished late and nobody took the key: its result is the key's, not a reason to run it again
        assertThat(records.complete(key, claim, new StoredResponse(201, Map.of(), new byte[] {1}), Duration.ofHours(1)))
                .isTrue();
        assertThat(records.find(key)).hasValueSatisfying(r -> assertThat(r).isInstanceOf(KeyRecord.Completed.class));
    }

    @Test
    void purgeDeletesExpiredRecordsInBoundedBatchesAndKeepsLiveOnes() throws Exception {
        String client = "client-" + UUID.randomUUID();
        for (int i = 0; i < 7; i++) {
            records.tryBegin(ScopedKey.of(client, "old-" + i), Fingerprint.of("r"), "f-" + i, Duration.ofMillis(1));
        }
        ScopedKey live = ScopedKey.of(client, "live");
        records.tryBegin(live, Fingerprint.of("r"), "f-live", Duration.ofDays(1));
        Thread.sleep(50);
        long expiredBefore = pg.queryLong("SELECT count(*) FROM idempotency_records WHERE expires_at <= clock_timestamp()");

        int purged = 0;
        for (int n; (n = records.purgeExpired(3)) > 0; ) {
            assertThat(n).isLessThanOrEqualTo(3);
            purged += n;
        }
        assertThat(purged).isGreaterThanOrEqualTo(7).isEqualTo((int) expiredBefore);
        assertThat(pg.queryLong("SELECT count(*) FROM idempotency_records WHERE client_id = ?", client)).isOne();
        assertThat(records.find(live)).isPresent();
    }
}
