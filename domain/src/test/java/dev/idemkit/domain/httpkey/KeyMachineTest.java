package dev.idemkit.domain.httpkey;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.InvalidKeyException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class KeyMachineTest {

    private static final Instant T0 = Instant.parse("2026-11-30T09:00:00Z");
    private static final KeyPolicy POLICY = KeyPolicy.defaults();
    private static final Fingerprint PAY_100 = Fingerprint.ofRequest("POST", "/payments",
            "{\"amount\":100}".getBytes(StandardCharsets.UTF_8));
    private static final StoredResponse CREATED = new StoredResponse(201, Map.of("Location", "/payments/7"),
            "{\"id\":7}".getBytes(StandardCharsets.UTF_8));

    @Test
    void firstRequestExecutesThenRetriesReplayTheStoredResponse() {
        assertThat(KeyMachine.decide(Optional.empty(), PAY_100, T0)).isEqualTo(new KeyDecision.Execute());
        KeyRecord.InProgress running = KeyMachine.begin(PAY_100, "fence-1", T0, POLICY);
        assertThat(running.expiresAt()).isEqualTo(T0.plus(KeyPolicy.DEFAULT_LEASE));
        assertThat(KeyMachine.decide(Optional.of(running), PAY_100, T0.plusSeconds(1)))
                .isEqualTo(new KeyDecision.WaitForFirst());

        KeyRecord done = KeyMachine.finish(running, CREATED, T0.plusSeconds(2), POLICY).orElseThrow();
        assertThat(done).isEqualTo(new KeyRecord.Completed(PAY_100, CREATED, T0, T0.plusSeconds(2).plus(Duration.ofHours(24))));
        assertThat(KeyMachine.decide(Optional.of(done), PAY_100, T0.plusSeconds(3)))
                .isEqualTo(new KeyDecision.Replay(CREATED));
    }

    @Test
    void aClaimWhoseHolderCrashedLapsesAfterTheLeaseSoTheRetryExecutes() {
        KeyPolicy policy = KeyPolicy.defaults().withLease(Duration.ofSeconds(30));
        KeyRecord.InProgress abandoned = KeyMachine.begin(PAY_100, "fence-1", T0, policy);
        assertThat(KeyMachine.decide(Optional.of(abandoned), PAY_100, T0.plusSeconds(29)))
                .isEqualTo(new KeyDecision.WaitForFirst());
        assertThat(KeyMachine.decide(Optional.of(abandoned), PAY_100, T0.plusSeconds(30)))
                .isEqualTo(new KeyDecision.Execute());
    }

    @Test
    void aLeaseLongerThanTheTtlIsRefused() {
        assertThatThrownBy(() -> KeyPolicy.defaults().withTtl(Duration.ofHours(1)).withLease(Duration.ofHours(2)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease");
    }

    @Test
    void aClientErrorIsAFinalAnswerAndIsReplayed() {
        StoredResponse invalid = new StoredResponse(422, Map.of(), "{}".getBytes(StandardCharsets.UTF_8));
        Optional<KeyRecord> after = KeyMachine.finish(KeyMachine.begin(PAY_100, "fence-1", T0, POLICY), invalid, T0, POLICY);
        assertThat(KeyMachine.decide(after, PAY_100, T0.plusSeconds(1))).isEqualTo(new KeyDecision.Replay(invalid));
    }

    @Test
    void aRecordExpiresExactlyAtItsExpiry() {
        KeyRecord.InProgress running = KeyMachine.begin(PAY_100, "fence-1", T0, POLICY);
        assertThat(running.isExpired(running.expiresAt().minusNanos(1))).isFalse();
        assertThat(running.isExpired(running.expiresAt())).isTrue();
    }

    @Test
    void parseRefusesAMissingKeyOnlyWhereRequired() {
        assertThatThrownBy(() -> KeyMachine.parse(null, KeyPolicy.Requirement.REQUIRED))
                .isInstanceOf(InvalidKeyException.class).hasMessageContaining("required");
        assertThat(KeyMachine.parse(null, KeyPolicy.Requirement.OPTIONAL)).isEmpty();
        assertThat(KeyMachine.parse("\"k-1\"", KeyPolicy.Requirement.OPTIONAL)).contains(new IdempotencyKey("k-1"));
        assertThatThrownBy(() -> KeyMachine.parse("", KeyPolicy.Requirement.OPTIONAL))
                .isInstanceOf(InvalidKeyException.class);
    }

    @Test
    void theTtlIsPositiveAndAtMostSevenDays() {
        assertThat(POLICY.ttl()).isEqualTo(Duration.ofHours(24));
        assertThat(POLICY.waitBound()).isEqualTo(Duration.ofSeconds(10));
        assertThat(POLICY.withTtl(Duration.ofDays(7)).ttl()).isEqualTo(Duration.ofDays(7));
        assertThatThrownBy(() -> POLICY.withTtl(Duration.ofDays(7).plusSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("7 days");
        assertThatThrownBy(() -> POLICY.withTtl(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> POLICY.withWaitBound(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aStoredResponseKeepsItsBodyByteForByte() {
        byte[] body = {1, 2, 3};
        StoredResponse r = new StoredResponse(200, Map.of(), body);
        body[0] = 9;
        r.body()[1] = 9;
        assertThat(r.body()).containsExactly(1, 2, 3);
        assertThat(r).isEqualTo(new StoredResponse(200, Map.of(), new byte[] {1, 2, 3}));
        assertThat(r.isServerError()).isFalse();
        assertThat(new StoredResponse(503, Map.of(), body).isServerError()).isTrue();
        assertThat(r.toString()).doesNotContain("[1, 2, 3]").contains("bytes=3");
        assertThatThrownBy(() -> new StoredResponse(600, Map.of(), body)).isInstanceOf(IllegalArgumentException.class);
    }
}
