package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.Connection;
import dev.idemkit.testsupport.TestRabbit;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;

/** The adapter's test settings, over the shared RabbitMQ fixtures of {@link TestRabbit}. */
final class RabbitFixtures {
    private RabbitFixtures() {}

    /** IDEMKIT_RABBIT_URI (default the local broker), fast confirm timeout and grace for tests. */
    static RabbitSettings settings() {
        return RabbitSettings.fromEnvironment().withShutdownGrace(Duration.ofSeconds(2));
    }

    static String anyQueue(String purpose) {
        return TestRabbit.unique(purpose);
    }

    static String anyConnectionName(String purpose) {
        return TestRabbit.unique(purpose);
    }

    /** A plain amqp-client connection, for what a test must do around the adapter (raw publishes, counts). */
    static Connection rawConnection() throws Exception {
        return TestRabbit.rawConnection(settings().uri().toString(), "idemkit-it-raw");
    }

    static long messageCount(Connection raw, String queue) throws IOException {
        return TestRabbit.messageCount(raw, queue);
    }

    /** Runs rabbitmqctl with the arguments; returns its standard output. */
    static String rabbitmqctl(String... args) throws IOException, InterruptedException {
        return TestRabbit.rabbitmqctl(args);
    }

    /** The queues of the default virtual host whose names start with {@code prefix}, as the broker holds them. */
    static Map<String, TestRabbit.BrokerQueue> brokerQueues(String prefix) throws IOException, InterruptedException {
        return TestRabbit.brokerQueues(prefix);
    }

    /** Force-closes, from the broker's side, every connection whose client-provided name starts with {@code prefix}. */
    static int closeConnections(String prefix) throws IOException, InterruptedException {
        return TestRabbit.closeConnections(prefix, Duration.ZERO);
    }
}
