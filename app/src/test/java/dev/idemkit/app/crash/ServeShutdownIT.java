package dev.idemkit.app.crash;

import dev.idemkit.testsupport.ChildJvm;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.adapters.sqs.SqsMessageTransport;
import dev.idemkit.adapters.sqs.SqsSettings;
import dev.idemkit.app.Idemkit;
import dev.idemkit.app.TestEnvironment;
import dev.idemkit.app.wiring.EmbeddedEngines;
import dev.idemkit.ports.out.OutgoingMessage;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@code idemkit serve} stopped by SIGTERM in the middle of a stream finishes what it took: the JVM halts only once
 * the shutdown hook returns, so the hook waits until the main thread has closed the subscriptions, the transport
 * (its pending batch deletes sent, not dropped), the store and the engines, and says so; what stays in the queue is
 * exactly what was not processed. (Before, the hook returned first and the JVM halted during that close; the HTTP
 * server's one-second stop usually gave the deletes time, which is why the "stopped" line is asserted too.)
 */
class ServeShutdownIT {

    @Test
    void aSigtermedServeDeletesEveryMessageItProcessed() throws Exception {
        String schema = TestEnvironment.unique("app_it_serve_stop");
        try (EmbeddedEngines engines = new EmbeddedEngines()) {
            URI endpoint = engines.sqsEndpoint();
            Map<String, String> env = TestEnvironment.settings(schema, "IDEMKIT_TRANSPORT", "sqs",
                    "IDEMKIT_SQS_ENDPOINT", endpoint.toString(), "IDEMKIT_HTTP_PORT", "0");
            int n = 400;
            try (SqsMessageTransport sqs = new SqsMessageTransport(SqsSettings.local(endpoint));
                    ChildJvm serve = CrashJvms.start(Idemkit.class.getName(), List.of("serve"), Map.of(), env,
                            "serve-shutdown-" + schema)) {
                assertThat(serve.awaitLine("idemkit consuming", Duration.ofSeconds(90))).as("serve started; log %s",
                        serve.log()).hasValueSatisfying(line -> assertThat(line).as("batched by default")
                                .contains("up to 100 deliveries per transaction"));
                for (int i = 0; i < n; i++) {
                    sqs.publish("accounts-credit", OutgoingMessage.of("credit-" + UUID.randomUUID(),
                            "{\"account_id\":\"acc-1\",\"amount\":1.00}".getBytes(StandardCharsets.UTF_8)));
                }
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (processed(schema) < n / 4 && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                int status = serve.terminate();
                assertThat(status).as("exit status after SIGTERM").isIn(0, 143);
                List<String> said = serve.unread();
                assertThat(said).as("the JVM halted only after serve closed the transport, the store and the engines")
                        .anySatisfy(line -> assertThat(line).startsWith("idemkit stopped"));

                long processed = processed(schema);
                assertThat(processed).isBetween((long) n / 4, (long) n);
                assertThat(pending(endpoint, "accounts-credit")).as("left in SQS: exactly the unprocessed")
                        .isEqualTo(n - processed);
            }
        } finally {
            TestEnvironment.dropSchema(schema);
        }
    }

    private static long processed(String schema) {
        return TestEnvironment.inboxRows(schema, "account-credit");
    }

    private static long pending(URI endpoint, String queue) {
        try (SqsCounts sqs = new SqsCounts(endpoint)) {
            return sqs.pending(queue);
        }
    }
}
