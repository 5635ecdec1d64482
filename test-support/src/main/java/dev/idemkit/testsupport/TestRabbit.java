package dev.idemkit.testsupport;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The machine's RabbitMQ as the tests reach it: {@code IDEMKIT_RABBIT_URI} (default guest on the local broker's
 * default virtual host). Tests name everything they declare with {@link #unique} and delete it; a test that needs
 * the app's fixed queue names takes a {@link Vhost} of its own. {@code rabbitmqctl} is the local broker's (as root).
 */
public final class TestRabbit {
    public static final String URI = TestPostgres.env("IDEMKIT_RABBIT_URI", "amqp://guest:guest@127.0.0.1:5672/%2F");

    private TestRabbit() {}

    /** {@code idemkit-it-<purpose>-<8 hex>}: a queue or connection name no other test uses. */
    public static String unique(String purpose) {
        return "idemkit-it-" + purpose + "-" + Names.tag(8);
    }

    /** A plain amqp-client connection without automatic recovery, for what a test does around the code under test. */
    public static Connection rawConnection(String name) throws IOException, TimeoutException {
        return rawConnection(URI, name);
    }

    /** As {@link #rawConnection(String)}, to another broker or virtual host. */
    public static Connection rawConnection(String uri, String name) throws IOException, TimeoutException {
        ConnectionFactory f = new ConnectionFactory();
        try {
            f.setUri(uri);
        } catch (Exception e) {
            throw new IllegalArgumentException("not an AMQP URI: " + uri, e);
        }
        f.setAutomaticRecoveryEnabled(false);
        return f.newConnection(name);
    }

    /** Ready messages of {@code queue}; an IOException when it does not exist. */
    public static long messageCount(Connection raw, String queue) throws IOException {
        try (Channel ch = raw.createChannel()) {
            return ch.queueDeclarePassive(queue).getMessageCount();
        } catch (TimeoutException e) {
            throw new IOException(e);
        }
    }

    /** Ready messages of {@code queue}, 0 when it does not exist (a passive declare of a missing queue closes its channel). */
    public static long readyOrZero(Connection raw, String queue) throws IOException {
        try {
            return messageCount(raw, queue);
        } catch (IOException e) {
            if (!raw.isOpen()) {
                throw e;
            }
            return 0;
        }
    }

    /** Runs the local {@code rabbitmqctl -q} with {@code args}; its output. */
    public static String rabbitmqctl(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("rabbitmqctl", "-q"));
        command.addAll(List.of(args));
        return Processes.run(Map.of(), command);
    }

    /**
     * Force-closes, from the broker's side, every connection whose client-provided name starts with {@code prefix},
     * waiting up to {@code patience} for at least one to be there (after an earlier close they may be recovering).
     * @return how many it closed (0 when none showed up in time)
     */
    public static int closeConnections(String prefix, Duration patience) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + patience.toNanos();
        while (true) {
            List<String> pids = new ArrayList<>();
            for (String line : rabbitmqctl("list_connections", "pid", "client_properties").split("\n")) {
                if (line.contains("\"" + prefix)) {
                    pids.add(line.trim().split("\\s+")[0]);
                }
            }
            if (!pids.isEmpty() || System.nanoTime() - deadline > 0) {
                for (String pid : pids) {
                    rabbitmqctl("close_connection", pid, "idemkit test: connection closed by the broker");
                }
                return pids.size();
            }
            Thread.sleep(200);
        }
    }

    /** A queue as the broker holds it ({@code rabbitmqctl list_queues}): its type and arguments, name to value. */
    public record BrokerQueue(String type, Map<String, Object> arguments) {}

    /** The queues of the default virtual host whose names start with {@code prefix}, as the broker holds them. */
    public static Map<String, BrokerQueue> brokerQueues(String prefix) throws IOException, InterruptedException {
        // Jackson is an optional dependency: touched only here, so a module without it can use the rest
        JsonNode all = new ObjectMapper().readTree(rabbitmqctl("--formatter", "json", "list_queues", "name", "type", "arguments"));
        Map<String, BrokerQueue> out = new TreeMap<>();
        for (JsonNode q : all) {
            String name = q.get("name").asText();
            if (name.startsWith(prefix)) {
                Map<String, Object> args = new TreeMap<>();
                for (JsonNode a : q.get("arguments")) {
                    JsonNode v = a.get(2);
                    args.put(a.get(0).asText(), v.isNumber() ? (Object) v.asLong() : v.asText());
                }
                out.put(name, new BrokerQueue(q.get("type").asText(), args));
            }
        }
        return out;
    }

    /**
     * A fresh virtual host on the machine's broker, usable by guest; closing it deletes it with everything in it. For
     * tests that must use fixed queue names (the app's) without touching the broker's own queues.
     *
     * <p>Each {@code rabbitmqctl} call boots an Erlang VM (2 to 10 s on a loaded 2-core machine, and a delete waits for
     * the broker to drop the host's queues and connections), so the calls run off the tests' threads: one virtual host
     * is made ahead for the next test of this JVM, and a closed one is deleted in the background. At JVM exit the
     * pending deletes, and the one made ahead, are finished (for at most 25 s).
     */
    public static final class Vhost implements AutoCloseable {
        private static final ExecutorService CLI = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "idemkit-test-vhosts");
            t.setDaemon(true);
            return t;
        });
        private static final BlockingQueue<Future<String>> AHEAD = new LinkedBlockingQueue<>();

        static {
            Runtime.getRuntime().addShutdownHook(new Thread(Vhost::finish, "idemkit-test-vhosts-exit"));
        }

        private final String name;

        public Vhost() throws IOException, InterruptedException {
            Future<String> ahead = AHEAD.poll();
            String made = null;
            if (ahead != null) {
                try {
                    made = ahead.get(2, TimeUnit.MINUTES);
                } catch (ExecutionException e) {
                    made = null; // made ahead and failed: make one now, where its failure is reported
                } catch (java.util.concurrent.TimeoutException e) {
                    made = null; // not made in time: make one now, and delete the late one once it exists
                    Future<String> late = ahead;
                    CLI.submit(() -> {
                        try {
                            delete(late.get());
                        } catch (ExecutionException | InterruptedException never) {
                            // never made: nothing to delete
                        }
                    });
                }
            }
            this.name = made != null ? made : create();
            AHEAD.add(CLI.submit(Vhost::create));
        }

        private static String create() throws IOException, InterruptedException {
            String name = Names.unique("idemkit_it_vhost");
            rabbitmqctl("add_vhost", name);
            rabbitmqctl("set_permissions", "-p", name, "guest", ".*", ".*", ".*");
            return name;
        }

        private static void finish() {
            for (Future<String> ahead; (ahead = AHEAD.poll()) != null; ) {
                Future<String> made = ahead;
                CLI.submit(() -> {
                    try {
                        delete(made.get());
                    } catch (ExecutionException | InterruptedException e) {
                        // never made: nothing to delete
                    }
                });
            }
            CLI.shutdown();
            try {
                CLI.awaitTermination(25, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        public String name() {
            return name;
        }

        /** {@link #URI} pointed at this virtual host. */
        public String uri() {
            java.net.URI base = java.net.URI.create(URI);
            return base.getScheme() + "://" + base.getRawUserInfo() + "@" + base.getHost() + ":"
                    + (base.getPort() > 0 ? base.getPort() : 5672) + "/" + name;
        }

        /** Deletes the virtual host in the background: nothing in it is reachable once its connections are closed. */
        @Override
        public void close() {
            CLI.submit(() -> delete(name));
        }

        private static void delete(String name) {
            try {
                rabbitmqctl("delete_vhost", name);
            } catch (IOException | InterruptedException e) {
                System.err.println("idemkit-test-vhosts: virtual host " + name + " not deleted: " + e.getMessage());
            }
        }
    }
}
