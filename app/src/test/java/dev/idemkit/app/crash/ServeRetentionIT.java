package dev.idemkit.app.crash;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.app.TestEnvironment;
import dev.idemkit.testsupport.ChildJvm;
import dev.idemkit.testsupport.TestRabbit;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Retention runs itself in {@code serve}: on its schedule ({@code retention.every}), in batches of
 * {@code retention.batch-size}, it deletes inbox keys older than the dedup window, expired Idempotency-Key records and
 * outbox rows sent longer ago than {@code outbox.sent-retention}, keeps everything else (a recent key, a live record),
 * and counts it on {@code /metrics}.
 */
class ServeRetentionIT {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void serveDeletesWhatIsPastRetentionOnItsScheduleAndCountsIt() throws Exception {
        String schema = TestEnvironment.unique("app_it_retention");
        try (TestRabbit.Vhost vhost = new TestRabbit.Vhost()) {
            Map<String, String> env = new HashMap<>(TestEnvironment.settings(schema, "IDEMKIT_RABBIT_URI", vhost.uri(),
                    "IDEMKIT_HTTP_PORT", "0", "IDEMKIT_RABBIT_QUEUE_TYPE", "classic", "IDEMKIT_RETENTION_EVERY", "1s",
                    "IDEMKIT_RETENTION_BATCH_SIZE", "100"));
            try (ChildJvm serve = CrashJvms.start("dev.idemkit.app.Idemkit", List.of("serve"), Map.of(), env,
                    "serve-retention-" + schema)) {
                String line = serve.awaitLine("idemkit HTTP on ", Duration.ofSeconds(90)).orElseThrow(() ->
                        new IllegalStateException("serve did not start; log: " + serve.log()));
                URI base = URI.create(line.substring("idemkit HTTP on ".length()).split("\\s+")[0]
                        .replace("localhost", "127.0.0.1"));
                try (Connection c = TestEnvironment.connect(); Statement s = c.createStatement()) {
                    s.execute("INSERT INTO " + schema + ".processed_messages (consumer, message_id, fingerprint,"
                            + " processed_at) SELECT 'account-credit', 'old-' || g, 'f', now() - interval '8 days'"
                            + " FROM generate_series(1, 1050) g");
                    s.execute("INSERT INTO " + schema + ".processed_messages (consumer, message_id, fingerprint,"
                            + " processed_at) VALUES ('account-credit', 'recent', 'f', now() - interval '1 day')");
                    s.execute("INSERT INTO " + schema + ".idempotency_records (client_id, idem_key, fingerprint, state,"
                            + " created_at, expires_at) VALUES ('a', 'expired', 'f', 'in_progress', now() - interval"
                            + " '2 days', now() - interval '1 day'), ('a', 'live', 'f', 'in_progress', now(), now()"
                            + " + interval '1 day')");
                    s.execute("INSERT INTO " + schema + ".outbox_messages (id, destination, ordering_key, headers, body,"
                            + " sent_at, appended_at) VALUES (gen_random_uuid(), 'd', 'k', '{}', '\\x00', now() -"
                            + " interval '2 days', now() - interval '2 days')");
                }

                Awaitility.await("retention ran").atMost(Duration.ofSeconds(30))
                        .until(() -> count(schema, "processed_messages WHERE message_id LIKE 'old-%'") == 0
                                && count(schema, "idempotency_records WHERE idem_key = 'expired'") == 0
                                && count(schema, "outbox_messages WHERE sent_at < now() - interval '1 day'") == 0);
                assertThat(count(schema, "processed_messages WHERE message_id = 'recent'")).isOne();
                assertThat(count(schema, "idempotency_records WHERE idem_key = 'live'")).isOne();
                String metrics = Awaitility.await("the run's metrics").atMost(Duration.ofSeconds(10))
                        .until(() -> metrics(base), m -> m.contains("table=\"processed_messages\"} 1050.0"));
                assertThat(metrics).contains("idemkit_retention_deleted_total{table=\"idempotency_records\"} 1.0",
                        "idemkit_retention_deleted_total{table=\"outbox_messages\"} 1.0", "idemkit_retention_caught_up 1.0");
                // the oldest key kept is the day-old one (the gauge starts at 0 before any run)
                assertThat(metrics).containsPattern("idemkit_retention_oldest_inbox_key_age_seconds 8[67][0-9]{3}\\.");
                assertThat(serve.terminate()).isIn(0, 143);
            }
        } finally {
            TestEnvironment.dropSchema(schema);
        }
    }

    private static String metrics(URI base) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(base.resolve("/metrics")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }

    private static long count(String schema, String tableAndWhere) throws Exception {
        try (Connection c = TestEnvironment.connect();
                PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM " + schema + "." + tableAndWhere);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
