package dev.idemkit.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class BenchMainTest {

    @Test
    void aNegativeWarmUpExits2BeforeConnectingToAnything() {
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new BenchMain());
        cli.setErr(new PrintWriter(err, true));
        cli.setOut(new PrintWriter(new StringWriter(), true));

        int code = cli.execute("--warmup-messages", "-1", "--pg-url", "jdbc:postgresql://127.0.0.1:1/nowhere");

        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains("counts must be positive").doesNotContain("Caused by:");
    }

    @Test
    void aPrefetchBelowTwoBatchesExits2() {
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new BenchMain());
        cli.setErr(new PrintWriter(err, true));
        cli.setOut(new PrintWriter(new StringWriter(), true));

        int code = cli.execute("--batch-size", "100", "--prefetch", "150");

        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains("--prefetch at least 2 x --batch-size");
    }
}
