package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/** Test fixtures: settings from the environment, unique queue names, a raw client, rabbitmqctl. */
final class RabbitFixtures {
    private RabbitFixtures() {}

    /** IDEMKIT_RABBIT_URI (default the local broker), fast confirm timeout and grace for tests. */
    static RabbitSettings settings() {
        return RabbitSettings.fromEnvironment().withShutdownGrace(Duration.ofSeconds(2));
    }

    static String anyQueue(String purpose) {
        return "idemkit-it-" + purpose + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    static String anyConnectionName(String purpose) {
        return "idemkit-it-" + purpose + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** A plain amqp-client connection, for what a test must do around the adapter (raw publishes, counts). */
    static Connection rawConnection() throws Exception {
        ConnectionFactory f = new ConnectionFactory();
        f.setUri(settings().uri());
        f.setAutomaticRecoveryEnabled(false);
        return f.newConnection("idemkit-it-raw");
    }

    static long messageCount(Connection raw, String queue) throws IOException {
        try (Channel ch = raw.createChannel()) {
            return ch.queueDeclarePassive(queue).getMessageCount();
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IOException(e);
        }
    }

    /** Runs rabbitmqctl with the arguments; returns its standard output. */
    static String rabbitmqctl(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add("rabbitmqctl");
        command.add("-q");
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("rabbitmqctl " + String.join(" ", args) + " failed: " + out);
        }
        return out;
    }

    /** A queue as the broker holds it (rabbitmqctl list_queues): its type and its arguments, name to value. */
    record BrokerQueue(String type, java.util.Map<String, Object> arguments) {}

    /** The queues of the default virtual host whose names start with {@code prefix}, as the broker holds them. */
    static java.util.Map<String, BrokerQueue> brokerQueues(String prefix) throws IOException, InterruptedException {
        com.fasterxml.jackson.databind.JsonNode all = new com.fasterxml.jackson.databind.ObjectMapper().readTree(
                rabbitmqctl("--formatter", "json", "list_queues", "name", "type", "arguments"));
        java.util.Map<String, BrokerQueue> out = new java.util.TreeMap<>();
        for (com.fasterxml.jackson.databind.JsonNode q : all) {
            String name = q.get("name").asText();
            if (name.startsWith(prefix)) {
                java.util.Map<String, Object> args = new java.util.TreeMap<>();
                for (com.fasterxml.jackson.databind.JsonNode a : q.get("arguments")) {
                    com.fasterxml.jackson.databind.JsonNode v = a.get(2);
                    args.put(a.get(0).asText(), v.isNumber() ? (Object) v.asLong() : v.asText());
                }
                out.put(name, new BrokerQueue(q.get("type").asText(), args));
            }
        }
        return out;
    }

    /** Force-closes, from the broker's side, every connection whose client-provided name starts with {@code prefix}. */
    static int closeConnections(String prefix) throws IOException, InterruptedException {
        int closed = 0;
        for (String line : rabbitmqctl("list_connections", "pid", "client_properties").split("\n")) {
            if (line.contains("\"" + prefix) || line.contains("<<\"" + prefix)) {
                String pid = line.trim().split("\\s+")[0];
                rabbitmqctl("close_connection", pid, "idemkit test: connection loss");
                closed++;
            }
        }
        return closed;
    }
}
