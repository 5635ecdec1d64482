package dev.idemkit.app;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.adapters.kafka.KafkaBroker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The seed's exercises 1, 3, 4 and 5 through {@code idemkit demo N}, on the real services, asserting the
 * printed criteria (exercise 2 is {@code PaymentsApiIT}).
 */
class DemoIT {
    private static final byte[] PNG_SIGNATURE = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

    private static String schema;

    @BeforeAll
    static void schema() {
        schema = TestEnvironment.unique("app_it_demo");
    }

    @AfterAll
    static void dropSchema() throws Exception {
        TestEnvironment.dropSchema(schema);
    }

    /** The README's first command: nothing configured, so embedded PostgreSQL and ElasticMQ, all five exercises. */
    @Test
    void demoAllWithNothingConfiguredRunsTheFiveExercisesOnEmbeddedEngines() {
        TestEnvironment.Run run = TestEnvironment.run(Map.of(), "demo", "all");

        assertThat(run.exitCode()).as("exit code; out:%n%s%nerr:%n%s", run.out(), run.err()).isZero();
        assertThat(run.out()).contains("idemkit store:     PostgreSQL (embedded, started in this process)");
        assertThat(run.out()).contains("idemkit transport: SQS, embedded ElasticMQ");
        assertThat(run.out()).contains("idemkit demo: 5 of 5 exercises passed").doesNotContain(" FAIL");
    }

    @Test
    void demo1OnRabbitCreditsThreeTimesWithoutTheInboxAndOnceWithIt() {
        TestEnvironment.Run run = TestEnvironment.run(TestEnvironment.settings(schema), "demo", "1");

        assertPassed(run);
        assertThat(run.out()).contains("idemkit transport: RabbitMQ");
        assertThat(run.out()).contains("balance without idempotency: 300.00 (expected 3x = 300.00) PASS");
        assertThat(run.out()).contains("balance with idempotency key + processed table: 100.00 after 3 deliveries"
                + " (expected 1x = 100.00) PASS");
        assertThat(run.out()).contains("with no shared memory: balance 100.00 (expected still 100.00) PASS");
        assertThat(run.out()).containsPattern("not an in-memory check: PostgreSQL constraint \\S+ PRIMARY KEY");
    }

    @Test
    void demo1OnTheRedisStoreGivesTheSameBalancesWithTheKeysInRedis() {
        String prefix = TestEnvironment.unique("it-demo");
        Map<String, String> env = TestEnvironment.settings(schema, "IDEMKIT_STORE", "redis", "IDEMKIT_REDIS_PREFIX", prefix);
        Config config = new Config();
        config.useSingleServer().setAddress(TestEnvironment.REDIS_URL);
        RedissonClient redis = Redisson.create(config);
        try {
            TestEnvironment.Run run = TestEnvironment.run(env, "demo", "1");

            assertPassed(run);
            assertThat(run.out()).contains("balance without idempotency: 300.00 (expected 3x = 300.00) PASS");
            assertThat(run.out()).contains("balance with idempotency key + processed table: 100.00 after 3 deliveries"
                    + " (expected 1x = 100.00) PASS");
            assertThat(run.out()).contains("with no shared memory: balance 100.00 (expected still 100.00) PASS");
            assertThat(run.out()).contains("not an in-memory check: Redis: the inbox key is written only if absent");
            assertThat(redis.getKeys().getKeysStreamByPattern(prefix + ":inbox:*").count())
                    .as("completed inbox keys under the configured prefix").isPositive();
        } finally {
            redis.getKeys().deleteByPattern(prefix + ":*");
            redis.shutdown();
        }
    }

    @Test
    @Tag("slow") // full tier: exercise 1 on SQS also runs in demoAll...
    void demo1OnSqsGivesTheSameBalances() {
        Map<String, String> env = TestEnvironment.settings(schema, "IDEMKIT_TRANSPORT", "sqs");
        TestEnvironment.Run run = TestEnvironment.run(env, "demo", "1");

        assertPassed(run);
        assertThat(run.out()).contains("idemkit transport: SQS, embedded ElasticMQ");
        assertThat(run.out()).contains("balance without idempotency: 300.00 (expected 3x = 300.00) PASS");
        assertThat(run.out()).contains("balance with idempotency key + processed table: 100.00 after 3 deliveries"
                + " (expected 1x = 100.00) PASS");
    }

    @Test
    @Tag("slow") // full tier: exercise 3 also runs in demoAll..., on the same embedded SQS
    void demo3DeduplicatesTenIdenticalFifoMessagesUntilTheWindowEnds() {
        Map<String, String> env = TestEnvironment.settings(schema, "IDEMKIT_TRANSPORT", "sqs");
        TestEnvironment.Run run = TestEnvironment.run(env, "demo", "3");

        assertPassed(run);
        assertThat(run.out()).contains("10 identical messages -> 1 delivery (expected 1) PASS");
        assertThat(run.out()).contains("message with one field changed -> 1 additional delivery (expected 1) PASS");
        assertThat(run.out()).contains("same message at +4 min (inside the window) -> 0 deliveries (expected 0) PASS");
        assertThat(run.out()).contains("same message after 5 min -> 1 delivery (expected 1) PASS");
        assertThat(run.out()).containsPattern("dedup id of the order: [0-9a-f]{64}");
    }

    @Test
    void demo4WritesThePngAndShowsJitterFlattensThePeak(@TempDir Path dir) throws Exception {
        Path png = dir.resolve("histogram.png");
        TestEnvironment.Run run = TestEnvironment.run(Map.of(), "demo", "4", "--histogram", png.toString());

        assertPassed(run);
        assertThat(run.out()).containsPattern("no jitter is a spike: 100 of 100 retries .* PASS");
        assertThat(run.out()).containsPattern("peak QPS without jitter \\d+ / with full jitter \\d+ = [\\d.]+x"
                + " \\(expected >= 10x\\) PASS");
        assertThat(run.out()).contains("no jitter (retries per 500 ms)", "full jitter (retries per 500 ms)", "#");
        assertThat(run.out()).contains("histogram written to " + png.toAbsolutePath());
        assertThat(png).isRegularFile();
        byte[] head = new byte[PNG_SIGNATURE.length];
        try (var in = Files.newInputStream(png)) {
            assertThat(in.read(head)).isEqualTo(PNG_SIGNATURE.length);
        }
        assertThat(head).isEqualTo(PNG_SIGNATURE);
        assertThat(Files.size(png)).isGreaterThan(1000);
    }

    @Test
    void demo5OnRabbitDeadLettersAfterExactlyThreeAttemptsAndAlertsAboveTen() {
        TestEnvironment.Run run = TestEnvironment.run(TestEnvironment.settings(schema), "demo", "5");

        assertPassed(run);
        assertThat(run.out()).contains("message in the DLQ after 3 attempts (expected exactly 3), DLQ depth 1 PASS");
        assertThat(run.out()).containsPattern("DLQ consumer records origin queue orders\\.placed\\.ex5-\\S+"
                + " \\(expected orders\\.placed\\.ex5-\\S+\\) PASS");
        assertThat(run.out()).contains("DLQ consumer records a timestamp for each attempt: 3 timestamps (expected 3)"
                + " PASS");
        assertThat(run.out()).containsPattern("DLQ consumer records the failure reason: \".*inventory service"
                + " unavailable.*\" PASS");
        assertThat(run.out()).containsPattern("(?m)^\\s+attempt 1 at \\S+: ");
        assertThat(run.out()).containsPattern("(?m)^\\s+attempt 3 at \\S+: ");
        assertThat(run.out()).containsPattern("(?m)^\\s+x-death: queue=orders\\.placed\\.ex5-\\S+ reason=\\S+");
        assertThat(run.out()).contains("DLQ holds 10: alert fired false (expected no alert at 10) PASS");
        assertThat(run.out()).contains("DLQ holds 11: alert fired true (expected an alert above 10) PASS");
        assertThat(run.out()).containsPattern("(?m)^\\s+ALERT: .+");
    }

    @Test
    void demo1OnKafkaGivesTheSameBalances() {
        Map<String, String> env = TestEnvironment.settings(schema, "IDEMKIT_TRANSPORT", "kafka",
                "IDEMKIT_KAFKA_BOOTSTRAP_SERVERS", KafkaBroker.shared().bootstrapServers());
        TestEnvironment.Run run = TestEnvironment.run(env, "demo", "1");

        assertPassed(run);
        assertThat(run.out()).contains("idemkit transport: Kafka at " + KafkaBroker.shared().bootstrapServers());
        assertThat(run.out()).contains("balance without idempotency: 300.00 (expected 3x = 300.00) PASS");
        assertThat(run.out()).contains("balance with idempotency key + processed table: 100.00 after 3 deliveries"
                + " (expected 1x = 100.00) PASS");
        assertThat(run.out()).contains("with no shared memory: balance 100.00 (expected still 100.00) PASS");
    }

    @Test
    @Tag("slow") // full tier: KafkaScenariosIT dead-letters a poison record after exactly three attempts with its origin
    void demo5OnKafkaDeadLettersAfterExactlyThreeAttemptsWithOriginTimestampsAndReasonAndAlertsAboveTen() {
        Map<String, String> env = TestEnvironment.settings(schema, "IDEMKIT_TRANSPORT", "kafka",
                "IDEMKIT_KAFKA_BOOTSTRAP_SERVERS", KafkaBroker.shared().bootstrapServers());
        TestEnvironment.Run run = TestEnvironment.run(env, "demo", "5");

        assertPassed(run);
        assertThat(run.out()).contains("message in the DLQ after 3 attempts (expected exactly 3), DLQ depth 1 PASS");
        assertThat(run.out()).containsPattern("DLQ consumer records origin queue orders\\.placed\\.ex5-\\S+"
                + " \\(expected orders\\.placed\\.ex5-\\S+\\) PASS");
        assertThat(run.out()).contains("DLQ consumer records a timestamp for each attempt: 3 timestamps (expected 3)"
                + " PASS");
        assertThat(run.out()).containsPattern("DLQ consumer records the failure reason: \".*inventory service"
                + " unavailable.*\" PASS");
        assertThat(run.out()).containsPattern("(?m)^\\s+attempt 3 at \\S+: ");
        assertThat(run.out()).contains("Kafka has no x-death");
        assertThat(run.out()).contains("DLQ holds 10: alert fired false (expected no alert at 10) PASS");
        assertThat(run.out()).contains("DLQ holds 11: alert fired true (expected an alert above 10) PASS");
    }

    private static void assertPassed(TestEnvironment.Run run) {
        assertThat(run.exitCode()).as("exit code; out:%n%s%nerr:%n%s", run.out(), run.err()).isZero();
        assertThat(run.out()).contains("idemkit demo: 1 of 1 exercises passed");
        assertThat(run.out()).doesNotContain(" FAIL");
    }
}
