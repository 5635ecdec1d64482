package dev.idemkit.app.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idemkit.adapters.kafka.KafkaBroker;
import dev.idemkit.adapters.kafka.KafkaMessageTransport;
import dev.idemkit.app.CreditPlan;
import dev.idemkit.app.Idemkit;
import dev.idemkit.app.TestEnvironment;
import dev.idemkit.app.consumers.AccountCredit;
import dev.idemkit.app.crash.CrashJvms;
import dev.idemkit.app.crash.CrashPoint;
import dev.idemkit.app.crash.KafkaCounts;
import dev.idemkit.app.crash.ServeChild;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.testsupport.ChildJvm;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Offsets in the database ({@code --kafka-offsets database}, docs/ARCHITECTURE.md section 14), proven with a real
 * kill: {@code serve} consuming credits from a real broker into PostgreSQL is SIGKILLed right after the inbox's
 * transaction committed a credit and before anything was settled with Kafka ({@link CrashPoint#AFTER_COMMIT_IN_STORE}),
 * then a second {@code serve} takes over. Every account ends exact either way (the inbox). With offsets in the
 * database the second {@code serve} starts where the committed effects end: no record whose effect committed is
 * delivered again (its duplicate count is 0). With Kafka's offsets only, the killed credit (committed, never settled)
 * and whatever was settled since Kafka's last commit are delivered again and recognised as duplicates: the bite.
 *
 * <p>One worker and one delivery per transaction ({@code --batch-size 1}, {@code IDEMKIT_CONCURRENCY=1}): the killed
 * thread is the only one processing, so nothing commits between the crash point and the kill.
 */
class KafkaOffsetsInDatabaseIT {
    private static final int CREDITS = 300;
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @Test
    void serveKilledAfterTheInboxCommittedStartsAgainWhereTheCommittedEffectsEnd() throws Exception {
        killAfterTheCommitAndStartAgain("database");
    }

    /** The bite, in the full tier (it shows what the option is for; the kill test above is the guarantee). */
    @Test
    @Tag("slow")
    void withKafkasOffsetsAloneWhatCommittedBeforeTheKillIsDeliveredAgain() throws Exception {
        killAfterTheCommitAndStartAgain("kafka");
    }

    private void killAfterTheCommitAndStartAgain(String offsets) throws Exception {
        String schema = TestEnvironment.unique("app_it_kafka_offsets");
        String run = UUID.randomUUID().toString().substring(0, 8);
        // a broker of its own: serve's topic and group names are the app's, fixed
        try (KafkaBroker broker = KafkaBroker.create()) {
            broker.start();
            CreditPlan credits = CreditPlan.of(new SplittableRandom(run.hashCode()), CREDITS, 0.0, 5, "offsets-" + run);
            try (KafkaMessageTransport producer = new KafkaMessageTransport(broker.settings())) {
                for (OutgoingMessage m : credits.messages()) {
                    producer.publish(AccountCredit.QUEUE, m);
                }
            }
            Map<String, String> env = TestEnvironment.settings(schema, "IDEMKIT_TRANSPORT", "kafka",
                    "IDEMKIT_KAFKA_BOOTSTRAP_SERVERS", broker.bootstrapServers(), "IDEMKIT_KAFKA_OFFSETS", offsets,
                    "IDEMKIT_CONCURRENCY", "1", "IDEMKIT_HTTP_PORT", "0");
            long committedAtKill;
            try (ChildJvm first = CrashJvms.start(ServeChild.class.getName(), List.of("serve", "--batch-size", "1"),
                    Map.of("idemkit.crash.point", CrashPoint.AFTER_COMMIT_IN_STORE.name(), "idemkit.crash.hit", "40"),
                    env, "kafka-offsets-" + offsets + "-1")) {
                assertThat(first.awaitLine("CRASH-POINT " + CrashPoint.AFTER_COMMIT_IN_STORE, Duration.ofSeconds(90)))
                        .as("serve reached the point; log %s", first.log()).isPresent();
                assertThat(first.kill()).isEqualTo(ChildJvm.SIGKILLED);
                committedAtKill = inboxRows(schema);
            }
            assertThat(committedAtKill).as("killed mid-stream").isBetween(1L, (long) CREDITS - 1);

            try (ChildJvm second = CrashJvms.start(Idemkit.class.getName(), List.of("serve", "--batch-size", "1"),
                    Map.of(), env, "kafka-offsets-" + offsets + "-2");
                    KafkaCounts counts = new KafkaCounts(broker.settings())) {
                String line = second.awaitLine("idemkit HTTP on ", Duration.ofSeconds(90)).orElseThrow(() ->
                        new IllegalStateException("serve did not start; log: " + second.log()));
                URI base = URI.create(line.substring("idemkit HTTP on ".length()).split("\\s+")[0]
                        .replace("localhost", "127.0.0.1"));
                await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200))
                        .until(() -> inboxRows(schema) == CREDITS && counts.pending(AccountCredit.QUEUE) == 0);
                Map<String, BigDecimal> expected = credits.expectedBalances();
                assertThat(credits.balances(schema)).isEqualTo(expected);
                long duplicates = decisions(base, "duplicate");
                if (offsets.equals("database")) {
                    assertThat(duplicates).as("records whose effects committed before the kill, delivered again")
                            .isZero();
                } else {
                    assertThat(duplicates).as("Kafka's offsets alone: the killed credit comes again at least")
                            .isGreaterThanOrEqualTo(1);
                }
                System.out.printf("kafka offsets in %s: %d of %d committed at the kill, %d delivered again%n", offsets,
                        committedAtKill, CREDITS, duplicates);
            }
        } finally {
            TestEnvironment.dropSchema(schema);
        }
    }

    private static long inboxRows(String schema) {
        return TestEnvironment.inboxRows(schema, "account-credit");
    }

    /** The credit consumer's {@code decision} count from serve's Prometheus page. */
    private static long decisions(URI base, String decision) throws Exception {
        String page = HTTP.send(HttpRequest.newBuilder(base.resolve("/metrics")).timeout(Duration.ofSeconds(10))
                .build(), HttpResponse.BodyHandlers.ofString()).body();
        Map<String, Long> found = new HashMap<>();
        Matcher m = Pattern.compile("(?m)^idemkit_messages_total\\{([^}]*)} ([0-9.eE+]+)$").matcher(page);
        while (m.find()) {
            if (m.group(1).contains("consumer=\"account-credit\"") && m.group(1).contains("decision=\"" + decision
                    + "\"")) {
                found.merge(decision, (long) Double.parseDouble(m.group(2)), Long::sum);
            }
        }
        return found.getOrDefault(decision, 0L);
    }
}
