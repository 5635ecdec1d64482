package dev.idemkit.adapters.postgres;

import java.util.Map;
import java.util.Objects;

/**
 * Connection settings: JDBC url, user, password, the schema idemkit's tables live in, and the pool size.
 * Read from the environment with localhost defaults. The password never appears in {@link #toString()}.
 *
 * @param schema a plain lowercase identifier ({@code [a-z_][a-z0-9_]*}, at most 63 characters)
 */
public record PostgresSettings(String url, String user, String password, String schema, int poolSize) {
    public static final String URL_VAR = "IDEMKIT_PG_URL";
    public static final String USER_VAR = "IDEMKIT_PG_USER";
    public static final String PASSWORD_VAR = "IDEMKIT_PG_PASSWORD";
    public static final String SCHEMA_VAR = "IDEMKIT_PG_SCHEMA";
    public static final String POOL_SIZE_VAR = "IDEMKIT_PG_POOL_SIZE";

    public PostgresSettings {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(user, "user");
        password = password == null ? "" : password;
        Identifiers.requireValid("schema", schema);
        if (!url.startsWith("jdbc:postgresql:")) {
            throw new IllegalArgumentException("url must be a jdbc:postgresql: url, got " + url.split("\\?")[0]);
        }
        if (poolSize < 1 || poolSize > 500) {
            throw new IllegalArgumentException("pool size must lie in 1..500, got " + poolSize);
        }
    }

    /** 127.0.0.1:5432, database test, user postgres, no password, schema idemkit, 10 connections. */
    public static PostgresSettings defaults() {
        return new PostgresSettings("jdbc:postgresql://127.0.0.1:5432/test", "postgres", "", "idemkit", 10);
    }

    /** The settings from {@code IDEMKIT_PG_URL}, {@code _USER}, {@code _PASSWORD}, {@code _SCHEMA}, {@code _POOL_SIZE}. */
    public static PostgresSettings fromEnvironment() {
        return fromEnvironment(System.getenv());
    }

    /** As {@link #fromEnvironment()}, from the given variables; a missing or blank variable takes its default. */
    public static PostgresSettings fromEnvironment(Map<String, String> env) {
        PostgresSettings d = defaults();
        String pool = or(env, POOL_SIZE_VAR, Integer.toString(d.poolSize));
        int size;
        try {
            size = Integer.parseInt(pool.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(POOL_SIZE_VAR + " must be a number, got " + pool, e);
        }
        return new PostgresSettings(or(env, URL_VAR, d.url), or(env, USER_VAR, d.user),
                env.getOrDefault(PASSWORD_VAR, d.password), or(env, SCHEMA_VAR, d.schema), size);
    }

    public PostgresSettings withSchema(String s) {
        return new PostgresSettings(url, user, password, s, poolSize);
    }

    public PostgresSettings withPoolSize(int n) {
        return new PostgresSettings(url, user, password, schema, n);
    }

    private static String or(Map<String, String> env, String name, String fallback) {
        String v = env.get(name);
        return v == null || v.isBlank() ? fallback : v.strip();
    }

    @Override
    public String toString() {
        return "PostgresSettings[url=" + url.split("\\?")[0] + ", user=" + user + ", password="
                + (password.isEmpty() ? "(none)" : "****") + ", schema=" + schema + ", poolSize=" + poolSize + "]";
    }
}
