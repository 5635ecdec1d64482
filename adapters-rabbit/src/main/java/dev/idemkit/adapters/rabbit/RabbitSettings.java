package dev.idemkit.adapters.rabbit;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
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
 * @param queueType the type of every queue idemkit declares (work queue, retry buckets, hold queue, dead-letter
 *     queue); an existing queue of another type or with other arguments is refused, never redeclared
 * @param addresses the cluster's nodes as {@code host:port}, tried in this order on connect and on recovery; empty
 *     means the uri's host and port. The uri still gives user, password, virtual host and TLS
 * @param deliveryLimit quorum queues only: how often the broker may deliver ONE copy of a message that comes back
 *     unsettled (the consumer crashed or lost its connection while holding it, or gave it back) before the broker
 *     dead-letters it into the dead-letter queue with reason {@code delivery_limit}. A safety net beyond idemkit's own
 *     attempt count: it counts only the deliveries idemkit could not count (each idemkit retry is a fresh copy that
 *     starts at 0), so it is independent of {@code maxAttemptsHint}
 */
public record RabbitSettings(URI uri, int prefetch, int consumers, Duration confirmTimeout, int maxAttemptsHint,
        Duration shutdownGrace, QueueType queueType, List<String> addresses, int deliveryLimit) {

    public static final String DEFAULT_URI = "amqp://guest:guest@127.0.0.1:5672/%2F";
    /** RabbitMQ 4's own default for quorum queues; far above what normal operation (restarts, rebalances) returns. */
    public static final int DEFAULT_DELIVERY_LIMIT = 20;
    public static final int MAX_DELIVERY_LIMIT = 10_000;

    /** The queue types idemkit declares. */
    public enum QueueType {
        /**
         * Replicated (Raft) queues: the durable type of a cluster. Dead-lettering is at-least-once
         * ({@code x-dead-letter-strategy=at-least-once}, {@code x-overflow=reject-publish}) and the work queue has
         * {@code x-delivery-limit}.
         */
        QUORUM,
        /**
         * Single-node classic queues, with the arguments idemkit declared before quorum queues plus an explicit
         * {@code x-queue-type=classic} (equivalent, for RabbitMQ, to the untyped queues of then).
         */
        CLASSIC;

        static QueueType parse(String text) {
            for (QueueType t : values()) {
                if (t.name().equalsIgnoreCase(text)) {
                    return t;
                }
            }
            throw new IllegalArgumentException("expected quorum or classic, got '" + text + "'");
        }

        /** As the setting spells it. */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public RabbitSettings {
        Objects.requireNonNull(uri, "uri");
        if (!"amqp".equals(uri.getScheme()) && !"amqps".equals(uri.getScheme())) {
            throw new IllegalArgumentException("rabbit uri must be amqp:// or amqps://, got scheme " + uri.getScheme());
        }
        if (uri.getHost() == null) {
            // java.net.URI reads no host, user or password from an authority it cannot parse (a host name with '_'),
            // and amqp-client would then connect to localhost as guest: refuse, never connect somewhere else
            throw new IllegalArgumentException("rabbit uri " + redact(uri) + " has no host that java.net.URI can read"
                    + " (a host name may hold letters, digits, '-' and '.', not '_'): use the broker's IP address or a"
                    + " valid DNS name");
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
        Objects.requireNonNull(queueType, "queueType");
        addresses = List.copyOf(addresses);
        addresses.forEach(RabbitSettings::requireHostAndPort);
        if (deliveryLimit < 1 || deliveryLimit > MAX_DELIVERY_LIMIT) {
            throw new IllegalArgumentException("deliveryLimit must be 1.." + MAX_DELIVERY_LIMIT + ", got " + deliveryLimit);
        }
    }

    /**
     * Local broker, prefetch 100, 1 consumer, 5 s confirm timeout, 3 attempts, 5 s grace, quorum queues, delivery
     * limit 20.
     */
    public static RabbitSettings defaults() {
        return new RabbitSettings(URI.create(DEFAULT_URI), 100, 1, Duration.ofSeconds(5), 3, Duration.ofSeconds(5),
                QueueType.QUORUM, List.of(), DEFAULT_DELIVERY_LIMIT);
    }

    /** {@code host:port} pairs separated by commas (blanks around them ignored), as {@code IDEMKIT_RABBIT_ADDRESSES} takes them. */
    public static List<String> parseAddresses(String text) {
        List<String> out = new ArrayList<>();
        for (String part : text.split(",")) {
            if (!part.isBlank()) {
                out.add(requireHostAndPort(part.strip()));
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("expected host:port[,host:port...], got '" + text + "'");
        }
        return List.copyOf(out);
    }

    private static String requireHostAndPort(String address) {
        int colon = address == null ? -1 : address.lastIndexOf(':');
        String host = colon <= 0 ? "" : address.substring(0, colon);
        boolean bracketed = host.startsWith("[") && host.endsWith("]") && host.length() > 2; // [::1]:5672
        if (colon <= 0 || colon == address.length() - 1 || address.contains("/") || address.contains("@")
                || !bracketed && (host.contains(":") || host.contains("[") || host.contains("]"))) {
            throw new IllegalArgumentException("a node address must be host:port, got '" + address + "'");
        }
        try {
            int port = Integer.parseInt(address.substring(colon + 1));
            if (port < 1 || port > 65_535) {
                throw new IllegalArgumentException("a node address's port must be 1..65535, got '" + address + "'");
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("a node address must be host:port, got '" + address + "'");
        }
        return address;
    }

    /**
     * The defaults overridden by {@code IDEMKIT_RABBIT_URI}, {@code IDEMKIT_RABBIT_PREFETCH},
     * {@code IDEMKIT_RABBIT_CONSUMERS}, {@code IDEMKIT_RABBIT_CONFIRM_TIMEOUT_MS},
     * {@code IDEMKIT_RABBIT_MAX_ATTEMPTS}, {@code IDEMKIT_RABBIT_SHUTDOWN_GRACE_MS}, {@code IDEMKIT_RABBIT_QUEUE_TYPE}
     * ({@code quorum} or {@code classic}), {@code IDEMKIT_RABBIT_ADDRESSES} ({@code host:port,host:port,...}) and
     * {@code IDEMKIT_RABBIT_DELIVERY_LIMIT}.
     */
    public static RabbitSettings fromEnvironment() {
        return fromEnvironment(System.getenv());
    }

    /** As {@link #fromEnvironment()}, reading the given variables. */
    public static RabbitSettings fromEnvironment(Map<String, String> env) {
        RabbitSettings d = defaults();
        int maxAttempts = read(env, "IDEMKIT_RABBIT_MAX_ATTEMPTS", Integer::parseInt, d.maxAttemptsHint);
        return new RabbitSettings(
                read(env, "IDEMKIT_RABBIT_URI", URI::create, d.uri),
                read(env, "IDEMKIT_RABBIT_PREFETCH", Integer::parseInt, d.prefetch),
                read(env, "IDEMKIT_RABBIT_CONSUMERS", Integer::parseInt, d.consumers),
                read(env, "IDEMKIT_RABBIT_CONFIRM_TIMEOUT_MS", s -> Duration.ofMillis(Long.parseLong(s)), d.confirmTimeout),
                maxAttempts,
                read(env, "IDEMKIT_RABBIT_SHUTDOWN_GRACE_MS", s -> Duration.ofMillis(Long.parseLong(s)), d.shutdownGrace),
                read(env, "IDEMKIT_RABBIT_QUEUE_TYPE", QueueType::parse, d.queueType),
                read(env, "IDEMKIT_RABBIT_ADDRESSES", RabbitSettings::parseAddresses, d.addresses),
                read(env, "IDEMKIT_RABBIT_DELIVERY_LIMIT", Integer::parseInt, d.deliveryLimit));
    }

    public RabbitSettings withUri(URI u) {
        return new RabbitSettings(u, prefetch, consumers, confirmTimeout, maxAttemptsHint, shutdownGrace, queueType, addresses, deliveryLimit);
    }

    public RabbitSettings withPrefetch(int n) {
        return new RabbitSettings(uri, n, consumers, confirmTimeout, maxAttemptsHint, shutdownGrace, queueType, addresses, deliveryLimit);
    }

    public RabbitSettings withConsumers(int n) {
        return new RabbitSettings(uri, prefetch, n, confirmTimeout, maxAttemptsHint, shutdownGrace, queueType, addresses, deliveryLimit);
    }

    public RabbitSettings withConfirmTimeout(Duration d) {
        return new RabbitSettings(uri, prefetch, consumers, d, maxAttemptsHint, shutdownGrace, queueType, addresses, deliveryLimit);
    }

    public RabbitSettings withMaxAttemptsHint(int n) {
        return new RabbitSettings(uri, prefetch, consumers, confirmTimeout, n, shutdownGrace, queueType, addresses,
                deliveryLimit);
    }

    public RabbitSettings withShutdownGrace(Duration d) {
        return new RabbitSettings(uri, prefetch, consumers, confirmTimeout, maxAttemptsHint, d, queueType, addresses, deliveryLimit);
    }

    public RabbitSettings withQueueType(QueueType t) {
        return new RabbitSettings(uri, prefetch, consumers, confirmTimeout, maxAttemptsHint, shutdownGrace, t, addresses, deliveryLimit);
    }

    public RabbitSettings withAddresses(List<String> nodes) {
        return new RabbitSettings(uri, prefetch, consumers, confirmTimeout, maxAttemptsHint, shutdownGrace, queueType, nodes, deliveryLimit);
    }

    public RabbitSettings withDeliveryLimit(int n) {
        return new RabbitSettings(uri, prefetch, consumers, confirmTimeout, maxAttemptsHint, shutdownGrace, queueType, addresses, n);
    }

    /** The uri with its password replaced by {@code ***}. */
    public String redactedUri() {
        return redact(uri);
    }

    /**
     * {@code uri} with the password of its user info replaced by {@code ***}, read from the text itself (between
     * {@code ://} and the last {@code @} before the path), so that a uri whose authority {@link URI} could not parse is
     * redacted too.
     */
    static String redact(URI uri) {
        String text = uri.toString();
        int start = text.indexOf("://");
        if (start < 0) {
            return text;
        }
        start += 3;
        int end = text.indexOf('/', start);
        String authority = end < 0 ? text.substring(start) : text.substring(start, end);
        int at = authority.lastIndexOf('@');
        if (at < 0) {
            return text;
        }
        String info = authority.substring(0, at);
        int colon = info.indexOf(':');
        String redacted = (colon < 0 ? info : info.substring(0, colon) + ":***") + authority.substring(at);
        return text.substring(0, start) + redacted + (end < 0 ? "" : text.substring(end));
    }

    @Override
    public String toString() {
        return "RabbitSettings[uri=" + redactedUri() + ", prefetch=" + prefetch + ", consumers=" + consumers
                + ", confirmTimeout=" + confirmTimeout + ", maxAttemptsHint=" + maxAttemptsHint
                + ", shutdownGrace=" + shutdownGrace + ", queueType=" + queueType.label()
                + (addresses.isEmpty() ? "" : ", addresses=" + addresses) + ", deliveryLimit=" + deliveryLimit + "]";
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
