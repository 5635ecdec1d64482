package dev.idemkit.domain.httpkey;

import static dev.idemkit.domain.Generators.FIRST_BODY;
import static dev.idemkit.domain.Generators.OTHER_BODY;
import static dev.idemkit.domain.Generators.clockSteps;
import static dev.idemkit.domain.Generators.keyHistories;
import static dev.idemkit.domain.Generators.responses;
import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Generators.KeyOp;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class KeyMachineProperties {

    private static final ScopedKey KEY = ScopedKey.of("client-a", "create-payment-1");
    private static final KeyPolicy POLICY = KeyPolicy.defaults();
    private static final Duration TTL = POLICY.ttl();
    private static final Duration LEASE = POLICY.lease();
    private static final Instant START = Instant.parse("2026-11-30T00:00:00Z");

    /**
     * What a client should observe for one key, written as plainly as possible: who opened the current
     * window, the first final answer given in it, and until when the window lives: a running request's
     * claim lives for the lease (so a crashed holder's key frees up), a final answer for the TTL.
     */
    private static final class Model {
        Fingerprint owner;
        StoredResponse firstAnswer;
        Instant liveUntil;
        int executionsInWindow;

        boolean live(Instant now) {
            return owner != null && now.isBefore(liveUntil);
        }

        boolean running() {
            return owner != null && firstAnswer == null;
        }

        void open(Fingerprint request, Instant now) {
            owner = request;
            firstAnswer = null;
            executionsInWindow = 1;
            liveUntil = now.plus(LEASE);
        }

        void release() {
            owner = null;
            firstAnswer = null;
        }

        void answer(StoredResponse response, Instant now) {
            firstAnswer = response;
            liveUntil = now.plus(TTL);
        }
    }

    /** Law: a key runs at most once per live window, replays its first final answer, 422s other fingerprints, frees on 5xx or expiry. */
    @Test
    void aKeyBehavesLikeTheModelOverAnyHistoryOfRequestsResponsesAndTime() {
        qt().withExamples(1000).forAll(keyHistories()).checkAssert(KeyMachineProperties::replay);
    }

    private static void replay(List<KeyOp> history) {
        Map<ScopedKey, KeyRecord> store = new HashMap<>();
        Model model = new Model();
        Instant now = START;
        for (KeyOp op : history) {
            if (op instanceof KeyOp.Send send) {
                Fingerprint request = send.fingerprint();
                KeyDecision decision = KeyMachine.decide(Optional.ofNullable(store.get(KEY)), request, now);
                if (!model.live(now)) {
                    assertThat(decision).as("a free, released or expired key executes").isInstanceOf(KeyDecision.Execute.class);
                } else if (!request.equals(model.owner)) {
                    assertThat(decision).as("another fingerprint while live").isInstanceOf(KeyDecision.FingerprintMismatch.class);
                } else if (model.firstAnswer != null) {
                    assertThat(decision).as("a retry after completion replays the first answer")
                            .isEqualTo(new KeyDecision.Replay(model.firstAnswer));
                } else {
                    assertThat(decision).as("a retry while the first runs waits").isInstanceOf(KeyDecision.WaitForFirst.class);
                }
                if (decision instanceof KeyDecision.Execute) {
                    store.put(KEY, KeyMachine.begin(request, "fence-" + now.toEpochMilli(), now, POLICY));
                    if (model.live(now)) {
                        model.executionsInWindow++;
                    } else {
                        model.open(request, now);
                    }
                }
                assertThat(model.executionsInWindow).as("executions in one live window").isLessThanOrEqualTo(1);
            } else if (op instanceof KeyOp.Finish finish) {
                assertThat(store.get(KEY) instanceof KeyRecord.InProgress).isEqualTo(model.running());
                if (store.get(KEY) instanceof KeyRecord.InProgress running) {
                    Optional<KeyRecord> after = KeyMachine.finish(running, finish.response(), now, POLICY);
                    after.ifPresentOrElse(r -> store.put(KEY, r), () -> store.remove(KEY));
                    if (finish.response().status() >= 500) {
                        assertThat(after).as("a 5xx releases the key").isEmpty();
                        model.release();
                    } else {
                        model.answer(finish.response(), now);
                    }
                }
            } else if (op instanceof KeyOp.Advance advance) {
                now = now.plus(advance.by());
            }
        }
    }

    /** Law: a record past its expiry counts as absent: any request executes, whatever the record held. */
    @Test
    void anExpiredRecordExecutesAnew() {
        qt().withExamples(1000).forAll(responses(), clockSteps(), clockSteps()).checkAssert((response, ran, waited) -> {
            KeyRecord.InProgress running = KeyMachine.begin(FIRST_BODY, "fence-1", START, POLICY);
            Instant finishedAt = START.plus(ran);
            Optional<KeyRecord> done = KeyMachine.finish(running, response, finishedAt, POLICY);
            for (KeyRecord record : List.of(running, done.orElse(running))) {
                Instant later = record.expiresAt().plus(waited).minusSeconds(1);
                for (Fingerprint request : List.of(FIRST_BODY, OTHER_BODY)) {
                    assertThat(KeyMachine.decide(Optional.of(record), request, later))
                            .isInstanceOf(KeyDecision.Execute.class);
                    assertThat(KeyMachine.decide(Optional.of(record), request, record.expiresAt()))
                            .isInstanceOf(KeyDecision.Execute.class);
                }
            }
        });
    }

    /** Law: while a record lives, a different fingerprint gets FingerprintMismatch, running or completed. */
    @Test
    void aDifferentFingerprintIsAMismatchWhileTheRecordLives() {
        qt().withExamples(1000).forAll(responses(), clockSteps()).checkAssert((response, elapsed) -> {
            KeyRecord.InProgress running = KeyMachine.begin(FIRST_BODY, "fence-1", START, POLICY);
            Instant now = START.plus(elapsed.compareTo(LEASE) < 0 ? elapsed : LEASE.dividedBy(2));
            assertThat(KeyMachine.decide(Optional.of(running), OTHER_BODY, now))
                    .isInstanceOf(KeyDecision.FingerprintMismatch.class);
            KeyMachine.finish(running, response, now, POLICY).ifPresent(done ->
                    assertThat(KeyMachine.decide(Optional.of(done), OTHER_BODY, now.plus(TTL).minusNanos(1)))
                            .isInstanceOf(KeyDecision.FingerprintMismatch.class));
        });
    }

    /** Law: a 5xx is never stored, so the next request with the key executes; any other status is replayed. */
    @Test
    void aServerErrorReleasesTheKeyAndAnyOtherStatusIsReplayed() {
        qt().withExamples(1000).forAll(responses()).checkAssert(response -> {
            KeyRecord.InProgress running = KeyMachine.begin(FIRST_BODY, "fence-1", START, POLICY);
            Optional<KeyRecord> after = KeyMachine.finish(running, response, START.plusSeconds(1), POLICY);
            KeyDecision retry = KeyMachine.decide(after, FIRST_BODY, START.plusSeconds(2));
            if (response.status() >= 500) {
                assertThat(after).isEmpty();
                assertThat(retry).isInstanceOf(KeyDecision.Execute.class);
            } else {
                assertThat(retry).isEqualTo(new KeyDecision.Replay(response));
            }
        });
    }
}
