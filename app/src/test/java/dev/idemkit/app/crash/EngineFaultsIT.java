package dev.idemkit.app.crash;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.testsupport.PrivateRedis;
import dev.idemkit.testsupport.Processes;
import dev.idemkit.testsupport.TestRabbit;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Engine faults mid-stream, with the crash harness's totals check (every effect exactly once, nothing unsettled), in
 * the full tier: the broker closing the consumer's connections and Redis restarted; PostgreSQL restarted:
 * {@link PostgresRestartSlowIT}. Redis is never the machine's own (which keeps nothing on disk, so restarting it would
 * wipe everyone's data) but a private {@code redis-server} with an append-only file, started, restarted and stopped
 * here.
 */
class EngineFaultsIT {
    private static final List<CrashHarness.Report> REPORTS = new ArrayList<>();

    @Test
    @Tag("slow") // full tier: adapters-rabbit's ConnectionLossIT closes a consumer's connection from the broker
    void rabbitMqClosingTheConsumersConnectionsLosesNothingAndRunsNothingTwice() throws Exception {
        try (CrashHarness harness = new CrashHarness(Combination.PG_RABBIT)) {
            java.util.concurrent.atomic.AtomicInteger closed = new java.util.concurrent.atomic.AtomicInteger();
            CrashHarness.Report r = harness.runWithFault("rabbit-close-connections", 400, List.of(40, 200),
                    () -> closed.addAndGet(TestRabbit.closeConnections(harness.connectionPrefix(), java.time.Duration.ofSeconds(15))));
            REPORTS.add(r);
            assertThat(closed).as("connections the broker closed").hasPositiveValue();
            assertThat(r.exact()).as(r.toString()).isTrue();
        }
    }

    @Test
    @Tag("slow")
    void redisRestartedMidStreamLosesNothingAndRunsNothingTwice() throws Exception {
        try (PrivateRedis redis = PrivateRedis.start();
                CrashHarness harness = new CrashHarness(Combination.REDIS_RABBIT,
                        Map.of("IDEMKIT_REDIS_URL", redis.url()))) {
            CrashHarness.Report r = harness.runWithFault("redis-restart", 400, List.of(60, 160, 260), redis::restart);
            REPORTS.add(r);
            assertThat(r.exact()).as(r.toString()).isTrue();
        }
    }

    @AfterAll
    static void print() {
        REPORTS.forEach(r -> System.out.println("engine-faults " + r));
    }
}
