package dev.idemkit.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Command-line errors that need no service: each exits 2 with one clear line naming the setting, and no
 * stack trace. None of these runs reaches a service (an unreachable address is configured throughout,
 * so a test that did would fail with exit 3, not 2).
 */
class CommandLineTest {
    /** Settings that would fail with exit 3 if anything tried to connect. */
    private static final Map<String, String> NOWHERE = Map.of(
            "IDEMKIT_PG_URL", "jdbc:postgresql://127.0.0.1:1/nowhere",
            "IDEMKIT_TRANSPORT", "rabbit",
            "IDEMKIT_RABBIT_URI", "amqp://guest:guest@127.0.0.1:1/");

    @Test
    void anUnknownFlagExits2WithTheUsage() {
        TestEnvironment.Run run = TestEnvironment.run(NOWHERE, "demo", "1", "--no-such-flag");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("Unknown option: '--no-such-flag'");
        assertThat(run.err()).contains("Usage: idemkit demo");
        assertNoStackTrace(run);
    }

    @Test
    void anUnknownSubcommandExits2WithTheUsage() {
        TestEnvironment.Run run = TestEnvironment.run(NOWHERE, "frobnicate");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("Usage: idemkit");
        assertNoStackTrace(run);
    }

    @Test
    void noSubcommandExits2() {
        TestEnvironment.Run run = TestEnvironment.run(NOWHERE);

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("a subcommand is required");
        assertNoStackTrace(run);
    }

    @Test
    void aPostgresUrlThatIsNotJdbcPostgresqlExits2NamingPgUrl() {
        TestEnvironment.Run run = TestEnvironment.run(NOWHERE, "demo", "1", "--pg-url", "mysql://x");

        assertOneLineNaming(run, "pg.url", "--pg-url");
        assertThat(run.err()).contains("mysql://x");
    }

    @Test
    void aRabbitUriThatIsNotAmqpExits2NamingRabbitUri() {
        TestEnvironment.Run run = TestEnvironment.run(NOWHERE, "demo", "1", "--rabbit-uri", "http://x");

        assertOneLineNaming(run, "rabbit.uri", "--rabbit-uri");
    }

    @Test
    void aBadUrlFromTheEnvironmentNamesTheEnvironmentVariableToo() {
        TestEnvironment.Run run = TestEnvironment.run(Map.of("IDEMKIT_REDIS_URL", "localhost:6379"), "demo", "1");

        assertOneLineNaming(run, "redis.url", "IDEMKIT_REDIS_URL");
    }

    @Test
    void aPasswordInABadUrlIsNotPrinted() {
        TestEnvironment.Run run = TestEnvironment.run(NOWHERE, "demo", "1", "--rabbit-uri",
                "http://admin:s3cret-pw@x/");

        assertOneLineNaming(run, "rabbit.uri", "--rabbit-uri");
        assertThat(run.err() + run.out()).doesNotContain("s3cret-pw");
    }

    @Test
    void anUnknownStoreExits2NamingStoreAndTheChoices() {
        TestEnvironment.Run run = TestEnvironment.run(NOWHERE, "demo", "1", "--store", "mysql");

        assertOneLineNaming(run, "store", "--store");
        assertThat(run.err()).contains("postgres or redis").contains("'mysql'");
    }

    @Test
    void anUnknownTransportExits2NamingTransport() {
        TestEnvironment.Run run = TestEnvironment.run(Map.of("IDEMKIT_TRANSPORT", "nats"), "demo", "1");

        assertOneLineNaming(run, "transport", "IDEMKIT_TRANSPORT");
        assertThat(run.err()).contains("rabbit or sqs or kafka");
    }

    @Test
    void aBadNumberOrDurationExits2NamingIt() {
        assertOneLineNaming(TestEnvironment.run(NOWHERE, "demo", "1", "--max-attempts", "three"), "max.attempts",
                "--max-attempts");
        assertOneLineNaming(TestEnvironment.run(NOWHERE, "demo", "1", "--http-port", "70000"), "http.port",
                "--http-port");
        assertOneLineNaming(TestEnvironment.run(NOWHERE, "demo", "1", "--backoff-base", "5x"), "backoff.base",
                "--backoff-base");
        assertOneLineNaming(TestEnvironment.run(NOWHERE, "demo", "1", "--backoff-base", "10s", "--backoff-cap",
                "1s"), "backoff.cap", "--backoff-cap");
    }

    @Test
    void malformedApiKeysExit2NamingApiKeys() {
        assertOneLineNaming(TestEnvironment.run(NOWHERE, "demo", "1", "--api-key", "a"), "api.keys",
                "IDEMKIT_API_KEYS");
        assertOneLineNaming(TestEnvironment.run(NOWHERE, "demo", "1", "--api-key", "a=short"), "api.keys",
                "IDEMKIT_API_KEYS");
    }

    @Test
    void aMissingPropertiesFileExits2NamingConfig() {
        TestEnvironment.Run run = TestEnvironment.run(NOWHERE, "demo", "1", "--config", "/nonexistent/idemkit.properties");

        assertOneLineNaming(run, "config", "--config");
    }

    @Test
    void aDedupWindowShorterThanTheRedeliveryHorizonExits2NamingInboxRetention() {
        TestEnvironment.Run run = TestEnvironment.run(NOWHERE, "demo", "1", "--inbox-retention", "1h");

        assertOneLineNaming(run, "inbox.retention", "--inbox-retention");
        assertThat(run.err()).contains("dlq.retention");
    }

    @Test
    void redriveWithoutApprovalExits2BeforeConnectingToAnything() {
        TestEnvironment.Run run = TestEnvironment.run(NOWHERE, "dlq", "redrive", "X", "--reason", "fixed the bug");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("--approved-by");
        assertNoStackTrace(run);
    }

    @Test
    void redriveWithABlankApproverExits2() {
        TestEnvironment.Run run = TestEnvironment.run(NOWHERE, "dlq", "redrive", "X", "--approved-by", " ",
                "--reason", "fixed the bug");

        assertThat(run.exitCode()).isEqualTo(2);
        assertNoStackTrace(run);
    }

    @Test
    void aPastWindowApprovalByTheFirstApproverExits2() {
        TestEnvironment.Run run = TestEnvironment.run(NOWHERE, "dlq", "redrive", "X", "--approved-by", "ana",
                "--reason", "fixed the bug", "--past-window-approved-by", "Ana", "--past-window-reason", "old but safe");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("another person than ana");
        assertNoStackTrace(run);
    }

    @Test
    void aDeadLetterRetentionPastWhatTheBrokerCanKeepExits2() {
        assertOneLineNaming(TestEnvironment.run(NOWHERE, "demo", "1", "--transport", "sqs", "--dlq-retention", "15d",
                "--inbox-retention", "30d"), "dlq.retention", "--dlq-retention");
    }

    @Test
    void anExerciseOutsideOneToFiveExits2() {
        TestEnvironment.Run run = TestEnvironment.run(NOWHERE, "demo", "6");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("exercise must be 1, 2, 3, 4, 5 or all");
        assertNoStackTrace(run);
    }

    @Test
    void serveWithABatchSizeOfZeroExits2BeforeConnectingToAnything() {
        TestEnvironment.Run run = TestEnvironment.run(NOWHERE, "serve", "--batch-size", "0");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("--batch-size must be 1..10000");
        assertNoStackTrace(run);
    }

    @Test
    void helpExits0AndListsTheSubcommands() {
        TestEnvironment.Run run = TestEnvironment.run(NOWHERE, "--help");

        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).contains("serve", "demo", "dlq", "publish");
    }

    private static void assertOneLineNaming(TestEnvironment.Run run, String setting, String where) {
        assertThat(run.exitCode()).as("exit code; err: %s", run.err()).isEqualTo(2);
        assertThat(run.err().strip().lines()).as("one line on stderr").hasSize(1);
        assertThat(run.err()).contains("'" + setting + "'").contains(where);
        assertNoStackTrace(run);
    }

    static void assertNoStackTrace(TestEnvironment.Run run) {
        assertThat(run.err()).doesNotContainPattern("(?m)^\\s+at [\\w.$]+\\(").doesNotContain("Caused by:");
        assertThat(run.out()).doesNotContainPattern("(?m)^\\s+at [\\w.$]+\\(");
    }
}
