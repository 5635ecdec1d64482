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
 * Engine faults mid-stream, with the crash harness's totals check (every effect exactly once, nothing unsettled): the
 * broker closing the consumer's connections (in {@code verify}), PostgreSQL restarted and Redis restarted (slow).
 * Every service is left as it was found: PostgreSQL comes back with its data (it keeps it on disk); Redis is never
 * the machine's own (which keeps nothing on disk, so restarting it would wipe everyone's data) but a private
 * {@code redis-server} with an append-only file, started, restarted and stopped here.
 */
class EngineFaultsIT {
    private static final List<CrashHarness.Report> REPORTS = new ArrayList<>();

    @Test
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
    void postgresRestartedMidStreamLosesNothingAndRunsNothingTwice() throws Exception {
        try (CrashHarness harness = new CrashHarness(Combination.PG_RABBIT)) {
            CrashHarness.Report r = harness.runWithFault("postgres-restart", 400, List.of(60, 160, 260),
                    EngineFaultsIT::restartPostgres);
            REPORTS.add(r);
            assertThat(r.exact()).as(r.toString()).isTrue();
        } finally {
            Processes.awaitPort(5432, java.time.Duration.ofSeconds(60));
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

    /** {@code pg_ctlcluster <version> main restart}: the machine's PostgreSQL, which keeps its data on disk. */
    static void restartPostgres() throws IOException, InterruptedException {
        String version;
        try (var versions = Files.list(Path.of("/etc/postgresql"))) {
            version = versions.map(p -> p.getFileName().toString()).sorted().reduce((a, b) -> b).orElseThrow();
        }
        Processes.run("pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart");
        Processes.awaitPort(5432, java.time.Duration.ofSeconds(60));
    }
}
