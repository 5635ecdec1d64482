package dev.idemkit.app;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * The local services the app's tests use (PostgreSQL, Redis, RabbitMQ), read from the same environment
 * variables the app reads, with localhost defaults; unique schema names; and running the command line
 * with a test's settings instead of the process environment.
 */
public final class TestEnvironment {
    public static final String PG_URL = env("IDEMKIT_PG_URL", "jdbc:postgresql://127.0.0.1:5432/test");
    public static final String PG_USER = env("IDEMKIT_PG_USER", "postgres");
    public static final String PG_PASSWORD = env("IDEMKIT_PG_PASSWORD", "");
    public static final String REDIS_URL = env("IDEMKIT_REDIS_URL", "redis://127.0.0.1:6379");
    public static final String RABBIT_URI = env("IDEMKIT_RABBIT_URI", "amqp://guest:guest@127.0.0.1:5672/%2F");
    public static final String CLIENT_A_KEY = "key-aaaaaaaa";
    public static final String CLIENT_B_KEY = "key-bbbbbbbb";

    private TestEnvironment() {}

    /** The output of one command line run. */
    public record Run(int exitCode, String out, String err) {}

    /** A fresh lowercase name such as {@code app_it_3f2a9c1d}. */
    public static String unique(String prefix) {
        return prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    /**
     * The settings of a test: the real PostgreSQL in {@code schema}, RabbitMQ transport, PostgreSQL store,
     * clients {@code a} and {@code b}; {@code overrides} are name/value pairs that replace or add entries.
     */
    public static Map<String, String> settings(String schema, String... overrides) {
        Map<String, String> env = new HashMap<>();
        env.put("IDEMKIT_PG_URL", PG_URL);
        env.put("IDEMKIT_PG_USER", PG_USER);
        env.put("IDEMKIT_PG_PASSWORD", PG_PASSWORD);
        env.put("IDEMKIT_PG_SCHEMA", schema);
        env.put("IDEMKIT_REDIS_URL", REDIS_URL);
        env.put("IDEMKIT_RABBIT_URI", RABBIT_URI);
        env.put("IDEMKIT_TRANSPORT", "rabbit");
        env.put("IDEMKIT_STORE", "postgres");
        env.put("IDEMKIT_API_KEYS", "a=" + CLIENT_A_KEY + ",b=" + CLIENT_B_KEY);
        if (overrides.length % 2 != 0) {
            throw new IllegalArgumentException("overrides come in name/value pairs");
        }
        for (int i = 0; i < overrides.length; i += 2) {
            env.put(overrides[i], overrides[i + 1]);
        }
        return env;
    }

    /** Messages ready in a RabbitMQ queue, read with a plain AMQP client (0 when the queue does not exist). */
    public static long rabbitReady(String queue) throws Exception {
        com.rabbitmq.client.ConnectionFactory f = new com.rabbitmq.client.ConnectionFactory();
        f.setUri(RABBIT_URI);
        try (com.rabbitmq.client.Connection c = f.newConnection("idemkit-it-counts");
                com.rabbitmq.client.Channel ch = c.createChannel()) {
            return ch.queueDeclarePassive(queue).getMessageCount();
        } catch (java.io.IOException e) {
            return 0; // not there (404 closes the channel)
        }
    }

    /**
     * A fresh RabbitMQ virtual host on the machine's broker (rabbitmqctl, as root), usable by guest; closing it deletes
     * it with everything in it. For tests that must use the app's fixed queue names without touching the broker's
     * own queues.
     */
    public static final class RabbitVhost implements AutoCloseable {
        private final String name = unique("idemkit_it_vhost");

        public RabbitVhost() throws Exception {
            rabbitmqctl("add_vhost", name);
            rabbitmqctl("set_permissions", "-p", name, "guest", ".*", ".*", ".*");
        }

        /** {@link #RABBIT_URI} pointed at this virtual host. */
        public String uri() {
            java.net.URI base = java.net.URI.create(RABBIT_URI);
            return base.getScheme() + "://" + base.getRawUserInfo() + "@" + base.getHost() + ":"
                    + (base.getPort() > 0 ? base.getPort() : 5672) + "/" + name;
        }

        @Override
        public void close() throws Exception {
            rabbitmqctl("delete_vhost", name);
        }

        private static void rabbitmqctl(String... args) throws Exception {
            java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of("rabbitmqctl", "-q"));
            command.addAll(java.util.List.of(args));
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            if (!p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("rabbitmqctl " + String.join(" ", args) + " failed: " + out);
            }
        }
    }

    public static Connection connect() throws SQLException {
        return DriverManager.getConnection(PG_URL, PG_USER, PG_PASSWORD);
    }

    public static void dropSchema(String schema) throws SQLException {
        if (!schema.matches("[a-z_][a-z0-9_]*")) {
            throw new IllegalArgumentException("not a test schema: " + schema);
        }
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
    }

    /** Runs {@code idemkit args...} in this JVM with {@code env} as its environment. */
    public static Run run(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code;
        try (PrintWriter o = new PrintWriter(out, true); PrintWriter e = new PrintWriter(err, true)) {
            code = Idemkit.execute(args, env, o, e);
        }
        return new Run(code, out.toString(), err.toString());
    }

    private static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? dflt : v;
    }
}
