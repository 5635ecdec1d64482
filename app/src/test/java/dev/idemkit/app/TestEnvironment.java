package dev.idemkit.app;

import dev.idemkit.testsupport.Names;
import dev.idemkit.testsupport.TestPostgres;
import dev.idemkit.testsupport.TestRabbit;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;

/**
 * The local services the app's tests use (PostgreSQL, Redis, RabbitMQ), read from the same environment
 * variables the app reads, with localhost defaults; unique schema names; and running the command line
 * with a test's settings instead of the process environment.
 */
public final class TestEnvironment {
    public static final String PG_URL = TestPostgres.URL;
    public static final String PG_USER = TestPostgres.USER;
    public static final String PG_PASSWORD = TestPostgres.PASSWORD;
    public static final String REDIS_URL = env("IDEMKIT_REDIS_URL", "redis://127.0.0.1:6379");
    public static final String RABBIT_URI = TestRabbit.URI;
    public static final String CLIENT_A_KEY = "key-aaaaaaaa";
    public static final String CLIENT_B_KEY = "key-bbbbbbbb";

    private TestEnvironment() {}

    /** The output of one command line run. */
    public record Run(int exitCode, String out, String err) {}

    /** A fresh lowercase name such as {@code app_it_3f2a9c1d}. */
    public static String unique(String prefix) {
        return Names.unique(prefix);
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
        // the tests run two classes at a time against one server (max_connections 100 here): 8 per instance, not 32
        env.put("IDEMKIT_PG_POOL_SIZE", "8");
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
        try (com.rabbitmq.client.Connection c = TestRabbit.rawConnection("idemkit-it-counts")) {
            return TestRabbit.readyOrZero(c, queue);
        }
    }

    public static Connection connect() throws SQLException {
        return TestPostgres.connect();
    }

    /** Inbox rows of {@code consumer} in {@code schema}; 0 while the schema does not exist yet (serve creates it). */
    public static long inboxRows(String schema, String consumer) {
        try (Connection c = connect(); java.sql.PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM " + schema + ".processed_messages WHERE consumer = ?")) {
            ps.setString(1, consumer);
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException notYet) {
            return 0;
        }
    }

    public static void dropSchema(String schema) {
        TestPostgres.dropSchema(schema);
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
