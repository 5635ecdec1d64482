package dev.idemkit.app.config;

import dev.idemkit.adapters.rabbit.RabbitSettings;
import java.net.URI;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Everything the app can be told, grouped by concern: where the keys live ({@link StoreSettings}), which broker carries
 * the messages ({@link TransportSettings}), how failures are retried ({@link RetrySettings}), what happens to dead
 * letters ({@link DeadLetterSettings}), the HTTP API ({@link HttpSettings}) and where traces go
 * ({@link TracingSettings}); each group has {@code with...} copies.
 * {@link #resolve} is the one place that reads flags, environment and file ({@link Sources}); adapters read nothing
 * themselves. Absent PostgreSQL URL or SQS endpoint means: start the embedded real engine and say so at start-up.
 */
public record AppSettings(StoreSettings store, TransportSettings transport, RetrySettings retry,
        DeadLetterSettings deadLetters, HttpSettings http, TracingSettings tracing) {

    /** The {@code sqs.endpoint} value that means AWS's own regional endpoint with the default credentials chain. */
    public static final String AWS = "aws";

    /** Where the dedup keys live. */
    public enum StoreKind { POSTGRES, REDIS }

    /** Which broker carries the messages. */
    public enum TransportKind { RABBIT, SQS, KAFKA }

    /**
     * How Kafka work topics are consumed: a consumer group (a partition per consumer, in order) or a share group (queue
     * semantics, any number of consumers per partition, no order).
     */
    public enum KafkaConsumption { GROUP, SHARE }

    /**
     * Where a Kafka consumer group's positions are kept: Kafka's committed offsets only (after settle, the default), or
     * also the PostgreSQL inbox's transactions (offsets in the database: the commit of an effect is the commit of its
     * offset, and a consumer given a partition starts there).
     */
    public enum KafkaOffsets { KAFKA, DATABASE }

    /**
     * The store: which one, each technology's connection, how long processed keys are kept, and how retention deletes
     * what it no longer keeps.
     */
    public record StoreSettings(StoreKind kind, PostgresChoice postgres, RedisChoice redis, Duration inboxRetention,
            RetentionSettings retention) {
        public StoreSettings withKind(StoreKind other) {
            return new StoreSettings(other, postgres, redis, inboxRetention, retention);
        }

        public StoreSettings withPostgres(PostgresChoice other) {
            return new StoreSettings(kind, other, redis, inboxRetention, retention);
        }

        public StoreSettings withInboxRetention(Duration other) {
            return new StoreSettings(kind, postgres, redis, other, retention);
        }
    }

    /**
     * PostgreSQL retention, run by {@code serve}: every {@code every}, sent outbox rows older than {@code sentOutbox},
     * processed keys older than the inbox retention and expired Idempotency-Key records are deleted in batches of
     * {@code batchSize} with at least {@code pause} after each, working at most {@code dutyCycle} of the time (Redis
     * expires its keys by TTL instead).
     */
    public record RetentionSettings(Duration every, Duration sentOutbox, int batchSize, Duration pause,
            double dutyCycle) {}

    /** PostgreSQL: no URL means the embedded server; {@code poolSize} connections per process (default 32). */
    public record PostgresChoice(Optional<String> url, String user, String password, String schema, int poolSize) {
        public static final int DEFAULT_POOL_SIZE = 32;

        public PostgresChoice withUrl(String other) {
            return new PostgresChoice(Optional.of(other), user, password, schema, poolSize);
        }

        public PostgresChoice withSchema(String other) {
            return new PostgresChoice(url, user, password, other, poolSize);
        }

        @Override
        public String toString() {
            return "PostgresChoice[url=" + url.orElse("(embedded)") + ", user=" + user + ", password="
                    + (password.isEmpty() ? "(none)" : "***") + ", schema=" + schema + ", poolSize=" + poolSize + "]";
        }
    }

    /**
     * Redis: the URL and key prefix, plus the Redis adapter's own options as resolved here ({@code redis.password},
     * {@code redis.topology}, {@code redis.database}, {@code redis.lease.ms}, {@code redis.claim.wait.ms}, under their
     * {@code IDEMKIT_REDIS_*} names for {@code RedisSettings.fromEnvironment}).
     */
    public record RedisChoice(URI url, String prefix, Map<String, String> adapterOptions) {
        public RedisChoice {
            adapterOptions = Map.copyOf(adapterOptions);
        }

        @Override
        public String toString() {
            return "RedisChoice[url=" + redact(url) + ", prefix=" + prefix + ", options=" + adapterOptions.keySet() + "]";
        }
    }

    /**
     * The broker: which one, each technology's address, and how many deliveries a consumer processes at once. The
     * RabbitMQ adapter's own options ({@code rabbit.queue-type}, {@code rabbit.addresses}, {@code rabbit.delivery-limit},
     * {@code rabbit.prefetch})
     * are checked here and passed on under their {@code IDEMKIT_RABBIT_*} names for {@code RabbitSettings.fromEnvironment}.
     */
    public record TransportSettings(TransportKind kind, URI rabbitUri, Map<String, String> rabbitOptions,
            Optional<String> sqsEndpoint, String sqsRegion, String kafkaBootstrapServers, int concurrency,
            KafkaConsumption kafkaConsumption, KafkaOffsets kafkaOffsets) {
        public TransportSettings {
            rabbitOptions = Map.copyOf(rabbitOptions);
        }

        public TransportSettings withKind(TransportKind other) {
            return new TransportSettings(other, rabbitUri, rabbitOptions, sqsEndpoint, sqsRegion, kafkaBootstrapServers,
                    concurrency, kafkaConsumption, kafkaOffsets);
        }

        @Override
        public String toString() {
            return "TransportSettings[kind=" + kind + ", rabbitUri=" + redact(rabbitUri) + ", rabbitOptions="
                    + rabbitOptions + ", sqsEndpoint="
                    + sqsEndpoint.orElse("(embedded)") + ", sqsRegion=" + sqsRegion + ", kafkaBootstrapServers="
                    + kafkaBootstrapServers + ", concurrency=" + concurrency + ", kafkaConsumption=" + kafkaConsumption
                    + ", kafkaOffsets=" + kafkaOffsets + "]";
        }
    }

    /** Deliveries before dead-lettering, and the exponential backoff between them. */
    public record RetrySettings(int maxAttempts, Duration backoffBase, Duration backoffCap) {}

    /** How old a dead letter may be for a redrive on one approval, and the DLQ depth above which an alert fires. */
    public record DeadLetterSettings(Duration retention, int alertThreshold) {}

    /**
     * The HTTP API's port (0: a free one), its clients' API keys (client to key), the operators' keys (operator to
     * key) for the dead-letter console and its JSON API, and what one client may take of the server ({@link HttpLimits});
     * an operator key is never a client key.
     */
    public record HttpSettings(int port, Map<String, String> apiKeys, Map<String, String> operatorKeys,
            HttpLimits limits) {
        public HttpSettings {
            apiKeys = Map.copyOf(apiKeys);
            operatorKeys = Map.copyOf(operatorKeys);
            java.util.Objects.requireNonNull(limits, "limits");
            for (String key : operatorKeys.values()) {
                if (apiKeys.containsValue(key)) {
                    throw new ConfigException("operator.keys", "an operator key must not also be a client's API key");
                }
            }
        }

        /** With the default limits. */
        public HttpSettings(int port, Map<String, String> apiKeys, Map<String, String> operatorKeys) {
            this(port, apiKeys, operatorKeys, HttpLimits.defaults());
        }

        /** Without operator keys ({@code serve} then generates one for its run), with the default limits. */
        public HttpSettings(int port, Map<String, String> apiKeys) {
            this(port, apiKeys, Map.of());
        }

        @Override
        public String toString() {
            return "HttpSettings[port=" + port + ", clients=" + apiKeys.keySet() + ", operators=" + operatorKeys.keySet()
                    + ", limits=" + limits + "]";
        }
    }

    /**
     * What one HTTP client may take of {@code serve}'s server, so that slow or idle clients cannot starve the others:
     * a request's headers must arrive within {@code headerTimeout} (counted from the connection's opening or, on a
     * kept-alive connection, from the request's first byte) and its body within {@code bodyTimeout} of the headers,
     * else the connection is dropped or answered 408; a connection that sends nothing for {@code idleTimeout} is
     * closed; at most {@code maxConnections} are open at once (further ones wait in the listen backlog until one
     * closes); a body larger than {@code maxBodyBytes} is answered 413 before it is buffered; {@code workers} threads
     * run the handlers, and only once a request has arrived whole.
     */
    public record HttpLimits(Duration headerTimeout, Duration bodyTimeout, Duration idleTimeout, int maxConnections,
            int maxBodyBytes, int workers) {
        public HttpLimits {
            for (Duration d : List.of(headerTimeout, bodyTimeout, idleTimeout)) {
                if (d.isNegative() || d.isZero()) {
                    throw new IllegalArgumentException("HTTP timeouts must be positive, got " + d);
                }
            }
            if (maxConnections < 1 || maxBodyBytes < 1 || workers < 1) {
                throw new IllegalArgumentException("HTTP maxConnections, maxBodyBytes and workers must be positive");
            }
        }

        /** Headers 10 s, body 10 s, idle 30 s, 512 connections, 256 KiB bodies (the console's), 128 workers. */
        public static HttpLimits defaults() {
            return new HttpLimits(Duration.ofSeconds(10), Duration.ofSeconds(10), Duration.ofSeconds(30), 512,
                    256 * 1024, 128);
        }

        public HttpLimits withTimeouts(Duration header, Duration body) {
            return new HttpLimits(header, body, idleTimeout, maxConnections, maxBodyBytes, workers);
        }

        public HttpLimits withMaxConnections(int other) {
            return new HttpLimits(headerTimeout, bodyTimeout, idleTimeout, other, maxBodyBytes, workers);
        }
    }

    /**
     * OpenTelemetry's own variables as the environment gave them ({@code OTEL_*}): whether to export traces and
     * where (the SDK's autoconfiguration reads the rest of them itself).
     */
    public record TracingSettings(Map<String, String> otelEnvironment) {
        public TracingSettings {
            otelEnvironment = Map.copyOf(otelEnvironment);
        }

        /** No traces exported. */
        public static TracingSettings none() {
            return new TracingSettings(Map.of());
        }
    }

    /** The same settings on another store. */
    public AppSettings withStore(StoreSettings other) {
        return new AppSettings(other, transport, retry, deadLetters, http, tracing);
    }

    /** The same settings on another transport. */
    public AppSettings withTransport(TransportSettings other) {
        return new AppSettings(store, other, retry, deadLetters, http, tracing);
    }

    public AppSettings withHttp(HttpSettings other) {
        return new AppSettings(store, transport, retry, deadLetters, other, tracing);
    }

    /** The Redis adapter's options that the app resolves (flag, environment or file) and passes on. */
    private static final List<String> REDIS_OPTIONS = List.of("redis.password", "redis.topology", "redis.database",
            "redis.lease.ms", "redis.claim.wait.ms");

    private static String redisPrefix(Sources s) {
        String prefix = s.get("redis.prefix").orElse("idemkit");
        if (!prefix.matches("[A-Za-z0-9._-]{1,64}")) {
            throw new ConfigException("redis.prefix", "expected 1..64 characters of A-Z a-z 0-9 . _ -, got '" + prefix + "'");
        }
        return prefix;
    }

    /** The RabbitMQ adapter's options, checked here so that a bad one is a configuration error naming it. */
    private static Map<String, String> rabbitOptions(Sources s) {
        Map<String, String> options = new LinkedHashMap<>();
        s.get("rabbit.queue-type").ifPresent(t -> {
            if (!t.equalsIgnoreCase("quorum") && !t.equalsIgnoreCase("classic")) {
                throw new ConfigException("rabbit.queue-type", "expected quorum or classic, got '" + t + "'");
            }
            options.put(Sources.envName("rabbit.queue-type"), t);
        });
        s.get("rabbit.addresses").ifPresent(a -> {
            try {
                options.put(Sources.envName("rabbit.addresses"), String.join(",", RabbitSettings.parseAddresses(a)));
            } catch (IllegalArgumentException e) {
                throw new ConfigException("rabbit.addresses", e.getMessage());
            }
        });
        if (s.get("rabbit.delivery-limit").isPresent()) {
            int limit = integer(s, "rabbit.delivery-limit", RabbitSettings.DEFAULT_DELIVERY_LIMIT, 1,
                    RabbitSettings.MAX_DELIVERY_LIMIT);
            options.put(Sources.envName("rabbit.delivery-limit"), Integer.toString(limit));
        }
        if (s.get("rabbit.prefetch").isPresent()) {
            options.put(Sources.envName("rabbit.prefetch"), Integer.toString(integer(s, "rabbit.prefetch", 100, 1, 65_535)));
        }
        return options;
    }

    /** The Redis adapter's options, checked here so that a bad one is a configuration error naming it. */
    private static Map<String, String> redisOptions(Sources s) {
        Map<String, String> options = new LinkedHashMap<>();
        for (String name : REDIS_OPTIONS) {
            s.get(name).ifPresent(v -> options.put(Sources.envName(name), v));
        }
        s.get("redis.topology").ifPresent(t -> {
            if (!t.equalsIgnoreCase("single") && !t.equalsIgnoreCase("cluster")) {
                throw new ConfigException("redis.topology", "expected single or cluster, got '" + t + "'");
            }
        });
        integer(s, "redis.database", 0, 0, 15);
        integer(s, "redis.lease.ms", 1, 1, Integer.MAX_VALUE);
        integer(s, "redis.claim.wait.ms", 1, 1, Integer.MAX_VALUE);
        return options;
    }

    public static AppSettings resolve(Sources s) {
        StoreKind storeKind = parseEnum(s, "store", StoreKind.class, StoreKind.POSTGRES);
        TransportKind transportKind = parseEnum(s, "transport", TransportKind.class, TransportKind.SQS);
        Optional<String> pgUrl = s.get("pg.url");
        pgUrl.ifPresent(u -> {
            if (!u.startsWith("jdbc:postgresql://")) {
                throw new ConfigException("pg.url", "expected jdbc:postgresql://HOST:PORT/DATABASE, got '" + u + "'");
            }
        });
        String schema = s.get("pg.schema").orElse("public");
        if (!schema.matches("[a-z_][a-z0-9_]{0,62}")) {
            throw new ConfigException("pg.schema", "expected a lowercase SQL identifier, got '" + schema + "'");
        }
        StoreSettings store = new StoreSettings(storeKind,
                new PostgresChoice(pgUrl, s.get("pg.user").orElse("postgres"), s.get("pg.password").orElse(""), schema,
                        integer(s, "pg.pool.size", PostgresChoice.DEFAULT_POOL_SIZE, 1, 500)),
                new RedisChoice(uri(s, "redis.url", "redis://127.0.0.1:6379", "redis", "rediss"), redisPrefix(s),
                        redisOptions(s)),
                duration(s, "inbox.retention", Duration.ofDays(7)),
                new RetentionSettings(duration(s, "retention.every", Duration.ofMinutes(10)),
                        // PostgresRetention.Policy.defaults() (AppSettingsTest holds them equal)
                        duration(s, "outbox.sent-retention", Duration.ofDays(1)),
                        integer(s, "retention.batch-size", 1000, 1, 100_000),
                        duration(s, "retention.pause", Duration.ofMillis(10)),
                        share(s, "retention.duty-cycle", 0.1)));
        int maxAttempts = integer(s, "max.attempts", 3, 1, 100);
        TransportSettings transport = new TransportSettings(transportKind,
                uri(s, "rabbit.uri", "amqp://guest:guest@127.0.0.1:5672/%2F", "amqp", "amqps"), rabbitOptions(s),
                s.get("sqs.endpoint").map(v -> v.equalsIgnoreCase(AWS) ? AWS
                        : uri(s, "sqs.endpoint", v, "http", "https").toString()),
                s.get("sqs.region").orElse("us-east-1"),
                kafkaBootstrapServers(s),
                integer(s, "concurrency", 4, 1, 256),
                parseEnum(s, "kafka.consumption", KafkaConsumption.class, KafkaConsumption.GROUP),
                parseEnum(s, "kafka.offsets", KafkaOffsets.class, KafkaOffsets.KAFKA));
        if (transport.kafkaOffsets() == KafkaOffsets.DATABASE) {
            if (storeKind != StoreKind.POSTGRES) {
                throw new ConfigException("kafka.offsets", "offsets in the database need the PostgreSQL store (the"
                        + " positions are written in its transactions), got store " + storeKind.name()
                        .toLowerCase(java.util.Locale.ROOT));
            }
            if (transport.kafkaConsumption() != KafkaConsumption.GROUP) {
                throw new ConfigException("kafka.offsets", "offsets in the database need kafka.consumption=group: a"
                        + " share group acknowledges each record to the broker and has no offsets to keep");
            }
        }
        RetrySettings retry = new RetrySettings(maxAttempts,
                duration(s, "backoff.base", Duration.ofSeconds(1)), duration(s, "backoff.cap", Duration.ofSeconds(60)));
        DeadLetterSettings deadLetters = new DeadLetterSettings(duration(s, "dlq.retention", Duration.ofDays(4)),
                integer(s, "dlq.alert.threshold", 10, 0, Integer.MAX_VALUE));
        HttpLimits limits = HttpLimits.defaults();
        HttpSettings http = new HttpSettings(integer(s, "http.port", 8080, 0, 65535), keyPairs(s, "api.keys", "client"),
                keyPairs(s, "operator.keys", "operator"), new HttpLimits(
                        duration(s, "http.header-timeout", limits.headerTimeout()),
                        duration(s, "http.body-timeout", limits.bodyTimeout()),
                        duration(s, "http.idle-timeout", limits.idleTimeout()),
                        integer(s, "http.max-connections", limits.maxConnections(), 1, 100_000),
                        integer(s, "http.max-body-bytes", limits.maxBodyBytes(), 1024, 64 * 1024 * 1024),
                        integer(s, "http.workers", limits.workers(), 2, 4096)));
        boolean sqs = transportKind == TransportKind.SQS;
        if (deadLetters.retention().compareTo(Duration.ofMinutes(1)) < 0
                || sqs && deadLetters.retention().compareTo(dev.idemkit.adapters.sqs.SqsSettings.MAX_RETENTION) > 0) {
            throw new ConfigException("dlq.retention", "how old a dead letter may be for a redrive on one approval must"
                    + " be at least 1m" + (sqs ? " and at most 14d (what SQS keeps)" : "") + ", got "
                    + deadLetters.retention());
        }
        if (retry.backoffCap().compareTo(retry.backoffBase()) < 0) {
            throw new ConfigException("backoff.cap", "cap " + retry.backoffCap() + " is below backoff.base "
                    + retry.backoffBase());
        }
        return new AppSettings(store, transport, retry, deadLetters, http,
                new TracingSettings(s.environmentStartingWith("OTEL_")));
    }


    public static String redact(URI uri) {
        return uri.getUserInfo() == null ? uri.toString() : uri.toString().replace(uri.getRawUserInfo(), "***");
    }

    /** {@code host:port[,host:port...]}; default the local broker's usual 127.0.0.1:9092. */
    private static String kafkaBootstrapServers(Sources s) {
        String v = s.get("kafka.bootstrap-servers").orElse("127.0.0.1:9092").trim();
        for (String server : v.split(",", -1)) {
            int colon = server.lastIndexOf(':');
            boolean ok = colon > 0 && colon < server.length() - 1;
            if (ok) {
                try {
                    int port = Integer.parseInt(server.substring(colon + 1).trim());
                    ok = port > 0 && port <= 65535;
                } catch (NumberFormatException e) {
                    ok = false;
                }
            }
            if (!ok) {
                throw new ConfigException("kafka.bootstrap-servers", "expected host:port[,host:port...], got '" + v + "'");
            }
        }
        return v;
    }

    private static <E extends Enum<E>> E parseEnum(Sources s, String name, Class<E> type, E dflt) {
        Optional<String> v = s.get(name);
        if (v.isEmpty()) {
            return dflt;
        }
        try {
            return Enum.valueOf(type, v.get().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            StringBuilder allowed = new StringBuilder();
            for (E c : type.getEnumConstants()) {
                allowed.append(allowed.length() == 0 ? "" : " or ").append(c.name().toLowerCase(Locale.ROOT));
            }
            throw new ConfigException(name, "expected " + allowed + ", got '" + v.get() + "'");
        }
    }

    private static URI uri(Sources s, String name, String dflt, String... schemes) {
        String v = s.get(name).orElse(dflt);
        try {
            URI u = new URI(v);
            if (u.getScheme() == null || java.util.Arrays.stream(schemes).noneMatch(u.getScheme()::equalsIgnoreCase)
                    || u.getHost() == null) {
                throw new ConfigException(name, "expected a " + String.join(" or ", schemes) + " URL with a host, got '"
                        + redactRaw(v) + "'");
            }
            return u;
        } catch (java.net.URISyntaxException e) {
            throw new ConfigException(name, "not a URL: " + e.getReason());
        }
    }

    private static String redactRaw(String v) {
        return v.replaceAll("//[^@/]*@", "//***@");
    }

    /** A share in (0, 1], such as {@code 0.1}. */
    private static double share(Sources s, String name, double dflt) {
        Optional<String> v = s.get(name);
        if (v.isEmpty()) {
            return dflt;
        }
        try {
            double d = Double.parseDouble(v.get());
            if (!(d > 0 && d <= 1)) {
                throw new ConfigException(name, "expected a share in (0, 1] such as 0.1, got " + v.get());
            }
            return d;
        } catch (NumberFormatException e) {
            throw new ConfigException(name, "expected a share in (0, 1] such as 0.1, got '" + v.get() + "'");
        }
    }

    private static int integer(Sources s, String name, int dflt, int min, int max) {
        Optional<String> v = s.get(name);
        if (v.isEmpty()) {
            return dflt;
        }
        try {
            int n = Integer.parseInt(v.get());
            if (n < min || n > max) {
                throw new ConfigException(name, "expected a number in " + min + ".." + max + ", got " + n);
            }
            return n;
        } catch (NumberFormatException e) {
            throw new ConfigException(name, "expected a whole number, got '" + v.get() + "'");
        }
    }

    /** Accepts ISO-8601 ({@code PT1S}, {@code P7D}) or a number with a unit: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 24h}, {@code 7d}. */
    static Duration duration(Sources s, String name, Duration dflt) {
        Optional<String> v = s.get(name);
        if (v.isEmpty()) {
            return dflt;
        }
        String t = v.get().toLowerCase(Locale.ROOT);
        try {
            Duration d;
            if (t.startsWith("p")) {
                d = Duration.parse(t.toUpperCase(Locale.ROOT));
            } else if (t.endsWith("ms")) {
                d = Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
            } else {
                long n = Long.parseLong(t.substring(0, t.length() - 1));
                d = switch (t.charAt(t.length() - 1)) {
                    case 's' -> Duration.ofSeconds(n);
                    case 'm' -> Duration.ofMinutes(n);
                    case 'h' -> Duration.ofHours(n);
                    case 'd' -> Duration.ofDays(n);
                    default -> throw new NumberFormatException();
                };
            }
            if (d.isNegative() || d.isZero()) {
                throw new ConfigException(name, "expected a positive duration, got '" + v.get() + "'");
            }
            return d;
        } catch (NumberFormatException | DateTimeParseException | StringIndexOutOfBoundsException
                | ArithmeticException e) { // ArithmeticException: too large for a Duration, e.g. 999999999999999d
            throw new ConfigException(name, "expected a duration such as 500ms, 30s, 5m, 24h, 7d or PT1S, got '"
                    + v.get() + "'");
        }
    }

    /** {@code name=key} pairs separated by commas ({@code api.keys}: clients; {@code operator.keys}: operators). */
    private static Map<String, String> keyPairs(Sources s, String setting, String who) {
        Map<String, String> keys = new LinkedHashMap<>();
        s.get(setting).ifPresent(v -> {
            for (String pair : v.split(",")) {
                String[] kv = pair.strip().split("=", 2);
                if (kv.length != 2 || kv[0].isBlank() || kv[1].isBlank()) {
                    throw new ConfigException(setting, "expected " + who + "=key pairs separated by commas");
                }
                if (!kv[0].strip().matches("[A-Za-z0-9._-]{1,64}")) {
                    throw new ConfigException(setting, who + " id '" + kv[0].strip()
                            + "' must be 1..64 letters, digits, '.', '_' or '-'");
                }
                if (kv[1].strip().length() < 8) {
                    throw new ConfigException(setting, "the key of " + who + " '" + kv[0].strip()
                            + "' must be at least 8 characters");
                }
                keys.put(kv[0].strip(), kv[1].strip());
            }
        });
        return Map.copyOf(keys);
    }
}
