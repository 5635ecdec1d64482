package dev.idemkit.app.crash;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.testsupport.Processes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * The machine's PostgreSQL restarted three times under a consumer mid-stream (full tier), with the crash harness's
 * totals check. It comes back with its data (it keeps it on disk); while it is down, nothing else may run: the class
 * runs alone.
 */
@Tag("slow")
@Isolated("restarts the machine's PostgreSQL: every other test would lose its connections")
class PostgresRestartSlowIT {

    @Test
    void postgresRestartedMidStreamLosesNothingAndRunsNothingTwice() throws Exception {
        try (CrashHarness harness = new CrashHarness(Combination.PG_RABBIT)) {
            CrashHarness.Report r = harness.runWithFault("postgres-restart", 400, List.of(60, 160, 260),
                    PostgresRestartSlowIT::restartPostgres);
            System.out.println("engine-faults " + r);
            assertThat(r.exact()).as(r.toString()).isTrue();
        } finally {
            Processes.awaitPort(5432, Duration.ofSeconds(60));
        }
    }

    /** {@code pg_ctlcluster <version> main restart}: the machine's PostgreSQL, which keeps its data on disk. */
    static void restartPostgres() throws IOException, InterruptedException {
        String version;
        try (var versions = Files.list(Path.of("/etc/postgresql"))) {
            version = versions.map(p -> p.getFileName().toString()).sorted().reduce((a, b) -> b).orElseThrow();
        }
        Processes.run("pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart");
        Processes.awaitPort(5432, Duration.ofSeconds(60));
    }
}
