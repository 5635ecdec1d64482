package dev.idemkit.adapters.rabbit;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * How the RabbitMQ adapter connects and consumes.
 *
 * @param uri the broker, {@code amqp://user:password@host:port/vhost} (never printed with its password)
 * @param prefetch unacknowledged deliveries the broker may push to ONE consumer channel (basic.qos)
 * @param consumers consumer channels per subscription; each has its own channel and thread, so this is
 *     the number of deliveries handled concurrently
 * @param confirmTimeout how long a publish waits for the broker's confirm before it fails
 * @param maxAttemptsHint the consumers' max attempts (the retry policy's); the retry buckets its default
 *     backoff needs are declared with the topology, the others on first use
 * @param shutdownGrace how long closing a subscription waits for in-flight deliveries to settle before
 *     their channels are closed (the broker then requeues what is unsettled)
 */
public record RabbitSettings(URI uri, int prefetch, int consumers, Duration confirmTimeout, int maxAttemptsHint,
        Duration shutdownGrace) {

    public static final String DEFAULT_URI = "amqp://guest:guest@127.0.0.1:5672/%2F";

    public RabbitSettings {
        Objects.requireNonNull(uri, "uri");
        if (!"amqp".equals(uri.getScheme()) && !"amqps".equals(uri.getScheme())) {
            throw new IllegalArgumentException("rabbit uri must be amqp:// or amqps://, got scheme " + uri.getScheme());
        }
        if (prefetch < 1 || prefetch > 65_535) {
            throw new IllegalArgumentException("prefetch must be 1..65535, got " + prefetch);
        }
        if (consumers < 1) {
            throw new IllegalArgumentException("consumers must be at least 1, got " + consumers);
        }
        requirePositive("confirmTimeout", confirmTimeout);
        if (maxAttemptsHint < 1) {
            throw new IllegalArgumentException("maxAttemptsHint must be at least 1, got " + maxAttemptsHint);
        }
        Objects.requireNonNull(shutdownGrace, "shutdownGrace");
        if (shutdownGrace.isNegative()) {
            throw new IllegalArgumentException("shutdownGrace must not be negative, got " + shutdownGrace);
        }
    }

    /** Local broker, prefetch 100, 1 consumer, 5 s confirm timeout, 3 attempts, 5 s grace. */
    public static RabbitSettings defaults() {
        return new RabbitSettings(URI.create(DEFAULT_URI), 100, 1, Duration.ofSeconds(5), 3, Duration.ofSeconds(5));
    }

    /**
     * The defaults overridden by {@code IDEMKIT_RABBIT_URI}, {@code IDEMKIT_RABBIT_PREFETCH},
     * {@code IDEMKIT_RABBIT_CONSUMERS}, {@code IDEMKIT_RABBIT_CONFIRM_TIMEOUT_MS},
     * {@code IDEMKIT_RABBIT_MAX_ATTEMPTS} and {@code IDEMKIT_RABBIT_SHUTDOWN_GRACE_MS}.
     */
    public static RabbitSettings fromEnvironment() {
        return fromEnvironment(System.getenv());
    }

    /** As {@link #fromEnvironment()}, reading the given variables. */
    public static RabbitSettings fromEnvironment(Map<String, String> env) {
        RabbitSettings d = defaults();
        return new RabbitSettings(
                read(env, "IDEMKIT_RABBIT_URI", URI::create, d.uri),
                read(env, "IDEMKIT_RABBIT_PREFETCH", Integer::parseInt, d.prefetch),
                read(env, "IDEMKIT_RABBIT_CONSUMERS", Integer::parseInt, d.consumers),
                read(env, "IDEMKIT_RABBIT_CONFIRM_TIMEOUT_MS", s -> Duration.ofMillis(Long.parseLong(s)), d.confirmTimeout),
                read(env, "IDEMKIT_RABBIT_MAX_ATTEMPTS", Integer::parseInt, d.maxAttemptsHint),
                read(env, "IDEMKIT_RABBIT_SHUTDOWN_GRACE_MS", s -> Duration.ofMillis(Long.parseLong(s)), d.shutdownGrace));
    }

    public RabbitSettings withUri(URI u) {
        return new RabbitSettings(u, prefetch, consumers, confirmTimeout, maxAttemptsHint, shutdownGrace);
    }

    public RabbitSettings withPrefetch(int n) {
        return new RabbitSettings(uri, n, consumers, confirmTimeout, maxAttemptsHint, shutdownGrace);
    }

    public RabbitSettings withConsumers(int n) {
        return new RabbitSettings(uri, prefetch, n, confirmTimeout, maxAttemptsHint, shutdownGrace);
    }

    public RabbitSettings withConfirmTimeout(Duration d) {
        return new RabbitSettings(uri, prefetch, consumers, d, maxAttemptsHint, shutdownGrace);
    }

    public RabbitSettings withMaxAttemptsHint(int n) {
        return new RabbitSettings(uri, prefetch, consumers, confirmTimeout, n, shutdownGrace);
    }

    public RabbitSettings withShutdownGrace(Duration d) {
        return new RabbitSettings(uri, prefetch, consumers, confirmTimeout, maxAttemptsHint, d);
    }

    /** The uri with its password replaced by {@code ***}. */
    public String redactedUri() {
        String info = uri.getRawUserInfo();
        if (info == null || !info.contains(":")) {
            return uri.toString();
        }
        return uri.toString().replace(info, info.substring(0, info.indexOf(':')) + ":***");
    }

    @Override
    public String toString() {
        return "RabbitSettings[uri=" + redactedUri() + ", prefetch=" + prefetch + ", consumers=" + consumers
                + ", confirmTimeout=" + confirmTimeout + ", maxAttemptsHint=" + maxAttemptsHint
                + ", shutdownGrace=" + shutdownGrace + "]";
    }

    private static void requirePositive(String name, Duration d) {
        Objects.requireNonNull(d, name);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, got " + d);
        }
    }

    private static <T> T read(Map<String, String> env, String name, Function<String, T> parse, T fallback) {
        String raw = env.get(name);
        if (raw == null || raw.isBlank()) {
            return fallback;
        }
        try {
            return parse.apply(raw.trim());
        } catch (RuntimeException e) {
            // a bad uri's message would echo the password: name the variable only
            String detail = name.endsWith("_URI") ? e.getClass().getSimpleName() : e.getMessage();
            throw new IllegalArgumentException(name + " is not valid: " + detail);
        }
    }
}
