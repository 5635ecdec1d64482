package dev.idemkit.app.config;

import java.net.URI;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Everything the app can be told. Absent PostgreSQL URL or SQS endpoint means: start the embedded real
 * engine (embedded PostgreSQL, embedded ElasticMQ) and say so at start-up.
 */
public record AppSettings(
        StoreKind store,
        TransportKind transport,
        Optional<String> pgUrl,
        String pgUser,
        String pgPassword,
        String pgSchema,
        URI redisUrl,
        String redisPrefix,
        URI rabbitUri,
        Optional<String> sqsEndpoint,
        String sqsRegion,
        int httpPort,
        Map<String, String> apiKeys,
        int maxAttempts,
        Duration backoffBase,
        Duration backoffCap,
        int dlqAlertThreshold,
        Duration inboxRetention,
        Duration dlqRetention,
        int concurrency) {

    /** The {@code sqs.endpoint} value that means AWS's own regional endpoint with the default credentials chain. */
    public static final String AWS = "aws";

    /** The same settings on another transport. */
    public AppSettings withTransport(TransportKind other) {
        return new AppSettings(store, other, pgUrl, pgUser, pgPassword, pgSchema, redisUrl, redisPrefix, rabbitUri,
                sqsEndpoint, sqsRegion, httpPort, apiKeys, maxAttempts, backoffBase, backoffCap, dlqAlertThreshold,
                inboxRetention, dlqRetention, concurrency);
    }

    /** Where the dedup keys live. */
    public enum StoreKind { POSTGRES, REDIS }

    /** Which broker carries the messages. */
    public enum TransportKind { RABBIT, SQS }

    private static String redisPrefix(Sources s) {
        String prefix = s.get("redis.prefix").orElse("idemkit");
        if (!prefix.matches("[A-Za-z0-9._-]{1,64}")) {
            throw new ConfigException("redis.prefix", "expected 1..64 characters of A-Z a-z 0-9 . _ -, got '" + prefix + "'");
        }
        return prefix;
    }

    public static AppSettings resolve(Sources s) {
        StoreKind store = parseEnum(s, "store", StoreKind.class, StoreKind.POSTGRES);
        TransportKind transport = parseEnum(s, "transport", TransportKind.class, TransportKind.SQS);
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
        AppSettings settings = new AppSettings(store, transport, pgUrl, s.get("pg.user").orElse("postgres"),
                s.get("pg.password").orElse(""), schema,
                uri(s, "redis.url", "redis://127.0.0.1:6379", "redis", "rediss"),
                redisPrefix(s),
                uri(s, "rabbit.uri", "amqp://guest:guest@127.0.0.1:5672/%2F", "amqp", "amqps"),
                s.get("sqs.endpoint").map(v -> v.equalsIgnoreCase(AWS) ? AWS
                        : uri(s, "sqs.endpoint", v, "http", "https").toString()),
                s.get("sqs.region").orElse("us-east-1"),
                integer(s, "http.port", 8080, 0, 65535),
                apiKeys(s),
                integer(s, "max.attempts", 3, 1, 100),
                duration(s, "backoff.base", Duration.ofSeconds(1)),
                duration(s, "backoff.cap", Duration.ofSeconds(60)),
                integer(s, "dlq.alert.threshold", 10, 0, Integer.MAX_VALUE),
                duration(s, "inbox.retention", Duration.ofDays(7)),
                duration(s, "dlq.retention", Duration.ofDays(4)),
                integer(s, "concurrency", 4, 1, 256));
        if (settings.dlqRetention().compareTo(Duration.ofMinutes(1)) < 0 || settings.transport() == TransportKind.SQS
                && settings.dlqRetention().compareTo(dev.idemkit.adapters.sqs.SqsSettings.MAX_RETENTION) > 0) {
            throw new ConfigException("dlq.retention", "how old a dead letter may be for a redrive on one approval must"
                    + " be at least 1m" + (settings.transport() == TransportKind.SQS ? " and at most 14d (what SQS keeps)"
                    : "") + ", got " + settings.dlqRetention());
        }
        if (settings.backoffCap().compareTo(settings.backoffBase()) < 0) {
            throw new ConfigException("backoff.cap", "cap " + settings.backoffCap() + " is below backoff.base "
                    + settings.backoffBase());
        }
        return settings;
    }

    /** Where the password appears, only its presence is shown. */
    @Override
    public String toString() {
        return "AppSettings[store=" + store + ", transport=" + transport + ", pgUrl=" + pgUrl.orElse("(embedded)")
                + ", redisUrl=" + redact(redisUrl) + ", redisPrefix=" + redisPrefix + ", rabbitUri=" + redact(rabbitUri) + ", sqsEndpoint="
                + sqsEndpoint.orElse("(embedded)") + ", httpPort=" + httpPort + ", clients="
                + apiKeys.keySet() + "]";
    }

    public static String redact(URI uri) {
        return uri.getUserInfo() == null ? uri.toString() : uri.toString().replace(uri.getRawUserInfo(), "***");
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

    private static Map<String, String> apiKeys(Sources s) {
        Map<String, String> keys = new LinkedHashMap<>();
        s.get("api.keys").ifPresent(v -> {
            for (String pair : v.split(",")) {
                String[] kv = pair.strip().split("=", 2);
                if (kv.length != 2 || kv[0].isBlank() || kv[1].isBlank()) {
                    throw new ConfigException("api.keys", "expected client=key pairs separated by commas");
                }
                if (!kv[0].strip().matches("[A-Za-z0-9._-]{1,64}")) {
                    throw new ConfigException("api.keys", "client id '" + kv[0].strip()
                            + "' must be 1..64 letters, digits, '.', '_' or '-'");
                }
                if (kv[1].strip().length() < 8) {
                    throw new ConfigException("api.keys", "the key of client '" + kv[0].strip()
                            + "' must be at least 8 characters");
                }
                keys.put(kv[0].strip(), kv[1].strip());
            }
        });
        return Map.copyOf(keys);
    }
}
