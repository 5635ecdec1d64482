package dev.idemkit.app;

import dev.idemkit.testsupport.TestRabbit;
import static dev.idemkit.app.CommandLineTest.assertNoStackTrace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Command-line failures that involve real services: an unreachable service exits 3 naming it, a port in
 * use exits 2 naming {@code http.port}; never a stack trace.
 */
class CommandLineIT {
    private static String schema;

    @BeforeAll
    static void schema() {
        schema = TestEnvironment.unique("app_it_cli");
    }

    @AfterAll
    static void dropSchema() throws Exception {
        TestEnvironment.dropSchema(schema);
    }

    @Test
    void anUnreachableRabbitMqExits3NamingItsAddress() {
        Map<String, String> env = TestEnvironment.settings(schema);
        TestEnvironment.Run run = TestEnvironment.run(env, "demo", "1", "--transport", "rabbit", "--rabbit-uri",
                "amqp://guest:guest@127.0.0.1:1/");

        assertThat(run.exitCode()).as("exit code; err: %s", run.err()).isEqualTo(3);
        assertThat(run.err()).contains("rabbit").contains("127.0.0.1:1");
        assertThat(run.err()).doesNotContain("guest:guest");
        assertOneLine(run);
    }

    @Test
    void anUnreachableKafkaExits3NamingItsAddress() {
        Map<String, String> env = TestEnvironment.settings(schema);
        TestEnvironment.Run run = TestEnvironment.run(env, "demo", "1", "--transport", "kafka",
                "--kafka-bootstrap-servers", "127.0.0.1:1");

        assertThat(run.exitCode()).as("exit code; err: %s", run.err()).isEqualTo(3);
        assertThat(run.err()).contains("kafka").contains("127.0.0.1:1").contains("refused");
        assertOneLine(run);
    }

    @Test
    void anUnreachablePostgresExits3NamingItsAddress() {
        Map<String, String> env = TestEnvironment.settings(schema);
        TestEnvironment.Run run = TestEnvironment.run(env, "demo", "1", "--pg-url",
                "jdbc:postgresql://127.0.0.1:1/x");

        assertThat(run.exitCode()).as("exit code; err: %s", run.err()).isEqualTo(3);
        assertThat(run.err()).containsIgnoringCase("postgres").contains("127.0.0.1:1");
        assertOneLine(run);
    }

    @Test
    void anUnreachableRedisExits3NamingItsAddress() {
        Map<String, String> env = TestEnvironment.settings(schema);
        TestEnvironment.Run run = TestEnvironment.run(env, "demo", "1", "--store", "redis", "--redis-url",
                "redis://127.0.0.1:1");

        assertThat(run.exitCode()).as("exit code; err: %s", run.err()).isEqualTo(3);
        assertThat(run.err()).containsIgnoringCase("redis").contains("127.0.0.1:1");
        assertOneLine(run);
    }

    @Test
    void serveOnAPortInUseExits2NamingHttpPort() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("0.0.0.0"))) {
            int port = taken.getLocalPort();
            // if the bind wrongly succeeded, serve would block until SIGTERM: bound the wait
            TestEnvironment.Run run = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> TestEnvironment.run(
                    TestEnvironment.settings(schema), "serve", "--http-port", Integer.toString(port)));

            assertThat(run.exitCode()).as("exit code; out: %s err: %s", run.out(), run.err()).isEqualTo(2);
            assertThat(run.err()).contains("'http.port'").contains(Integer.toString(port)).contains("in use");
            assertThat(run.err().strip().lines()).hasSize(1);
            assertNoStackTrace(run);
            assertThat(taken.isBound()).isTrue();
        }
    }

    @Test
    void serveRefusesAnExistingClassicQueueWhenQuorumQueuesAreWantedExits2NamingQueueArgumentAndBothValues()
            throws Exception {
        try (TestRabbit.Vhost vhost = new TestRabbit.Vhost()) {
            // a deployment from before quorum queues: the seed's queues exist as classic ones
            try (dev.idemkit.adapters.rabbit.RabbitMessageTransport classic = new dev.idemkit.adapters.rabbit
                    .RabbitMessageTransport(dev.idemkit.adapters.rabbit.RabbitSettings.defaults()
                            .withUri(java.net.URI.create(vhost.uri()))
                            .withQueueType(dev.idemkit.adapters.rabbit.RabbitSettings.QueueType.CLASSIC))) {
                classic.declare("orders.placed");
                classic.declare("accounts.credit");
            }
            Map<String, String> env = TestEnvironment.settings(schema, "IDEMKIT_RABBIT_URI", vhost.uri(),
                    "IDEMKIT_HTTP_PORT", "0");
            TestEnvironment.Run run = assertTimeoutPreemptively(Duration.ofSeconds(60),
                    () -> TestEnvironment.run(env, "serve"));

            assertThat(run.exitCode()).as("exit code; out: %s err: %s", run.out(), run.err()).isEqualTo(2);
            assertThat(run.err()).contains("queue 'orders.placed' has x-queue-type 'classic' where the settings"
                    + " want 'quorum'").contains("rabbit.queue-type").doesNotContain("guest:guest");
            assertThat(run.err().strip().lines()).hasSize(1);
            assertNoStackTrace(run);

            // told the truth about the queues, the same deployment works: publish on the classic queues
            TestEnvironment.Run refused = TestEnvironment.run(env, "publish", "--queue", "accounts.credit", "-n", "3");
            assertThat(refused.exitCode()).as("publish refuses the same way; err: %s", refused.err()).isEqualTo(2);
            TestEnvironment.Run publish = TestEnvironment.run(env, "publish", "--queue", "accounts.credit", "-n", "3",
                    "--rabbit-queue-type", "classic");
            assertThat(publish.exitCode()).as("exit code; out: %s err: %s", publish.out(), publish.err()).isZero();
        }
    }

    @Test
    void dlqListAndShowNeverPrintAControlCharacterThatCameFromTheWire() throws Exception {
        String queue = TestEnvironment.unique("app-it-dlq-terminal");
        try (dev.idemkit.adapters.rabbit.RabbitMessageTransport rabbit = new dev.idemkit.adapters.rabbit
                .RabbitMessageTransport(dev.idemkit.adapters.rabbit.RabbitSettings.defaults()
                        .withUri(java.net.URI.create(TestEnvironment.RABBIT_URI)))) {
            rabbit.declare(queue);
            try {
                // a dead letter as idemkit writes it (through the hold queue), with escape sequences from the wire
                com.rabbitmq.client.ConnectionFactory f = new com.rabbitmq.client.ConnectionFactory();
                f.setUri(TestEnvironment.RABBIT_URI);
                try (com.rabbitmq.client.Connection c = f.newConnection(); com.rabbitmq.client.Channel ch = c.createChannel()) {
                    ch.basicPublish("", queue + ".dlq.hold", new com.rabbitmq.client.AMQP.BasicProperties.Builder()
                            .messageId("bad\u001b[2Jid").deliveryMode(2).headers(Map.of(
                                    "x-idemkit-dead-letter-reason", "\u001b]0;pwned\u0007gave up: \u001b[31mboom",
                                    "x-idemkit-dead-letter-id", "dl-1",
                                    "x-idemkit-attempts", "1\t2026-12-01T00:00:00Z\t\u001b[1mboom"))
                            .build(), "{\"x\":\"\u001b[2J\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8));
                }
                Map<String, String> env = TestEnvironment.settings(schema);
                org.awaitility.Awaitility.await("the dead letter").atMost(Duration.ofSeconds(10))
                        .until(() -> TestEnvironment.run(env, "dlq", "list", "--queue", queue).out().contains("dl-1"));

                TestEnvironment.Run list = TestEnvironment.run(env, "dlq", "list", "--queue", queue);
                TestEnvironment.Run show = TestEnvironment.run(env, "dlq", "show", "dl-1", "--queue", queue, "--body");
                for (TestEnvironment.Run run : java.util.List.of(list, show)) {
                    assertThat(run.exitCode()).as("exit code; err: %s", run.err()).isZero();
                    assertThat(run.out()).doesNotContain("\u001b").doesNotContain("\u0007")
                            .contains("\\u001b");
                }
                assertThat(list.out()).contains("bad?[2Jid").contains("gave up: \\u001b[31mboom");
                assertThat(show.out()).contains("attempt 1 at 2026-12-01T00:00:00Z: \\u001b[1mboom");
            } finally {
                rabbit.deleteTopology(queue);
            }
        }
    }

    private static void assertOneLine(TestEnvironment.Run run) {
        assertThat(run.err().strip().lines()).as("one line on stderr: %s", run.err()).hasSize(1);
        assertNoStackTrace(run);
    }
}
