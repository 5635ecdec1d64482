package dev.idemkit.ports.broken;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.ports.out.IdempotencyRecords.Begin;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The broken stores must lose their races even when the scheduler starts the racers apart; otherwise the bite
 * tests fail by chance (CI did: the parallel-requests race over {@link CheckThenClaimIdempotencyRecords} saw
 * no double claim once).
 */
class CheckActWindowTest {

    @Test
    void twoRacersStartedTwentyMillisecondsApartBothClaimTheKey() throws Exception {
        CheckThenClaimIdempotencyRecords records = new CheckThenClaimIdempotencyRecords();
        ScopedKey key = ScopedKey.of("client-a", "order-1");
        Fingerprint fp = Fingerprint.of("same request");

        ExecutorService racers = Executors.newFixedThreadPool(2);
        try {
            Future<Begin> first = racers.submit(() -> records.tryBegin(key, fp, "f-1", Duration.ofMinutes(10)));
            Thread.sleep(20);
            Future<Begin> second = racers.submit(() -> records.tryBegin(key, fp, "f-2", Duration.ofMinutes(10)));

            assertThat(first.get(10, TimeUnit.SECONDS)).as("first racer").isInstanceOf(Begin.Claimed.class);
            assertThat(second.get(10, TimeUnit.SECONDS)).as("second racer").isInstanceOf(Begin.Claimed.class);
        } finally {
            racers.shutdownNow();
        }
    }
}
