package dev.idemkit.adapters.sqs;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * How to reach SQS and how to consume from it.
 *
 * <p>Credentials: with an {@code endpoint} (a local SQS-compatible server in tests) static credentials
 * are used, so the SDK never probes the instance-metadata address; without one, the SDK's default
 * provider chain (environment, profile, container or instance role) decides and nothing is stored
 * here. {@link #toString()} never prints a secret.
 *
 * @param endpoint the SQS endpoint; empty means AWS's regional endpoint
 * @param region the AWS region (also required by local servers for request signing)
 * @param staticCredentials access key id and secret, present only together with an endpoint
 * @param waitTimeSeconds long-polling wait of one receive, 0..20 (20 in production, shorter in tests)
 * @param batchSize messages per receive and per delete batch, 1..10 (1 turns batching off)
 * @param maxConcurrentHandlers how many deliveries of one subscription are handled at once
 * @param visibilityTimeout how long a received message stays hidden; the heartbeat extends it
 * @param heartbeatInterval how often a running handler's message gets its visibility extended;
 *     must be shorter than the visibility timeout
 * @param redriveMaxReceiveCount when positive, a native SQS redrive policy with this maxReceiveCount is
 *     set on work queues as a safety net (set it above the retry policy's max attempts); 0 = none
 * @param closeGrace how long closing a subscription waits for running handlers
 */
public record SqsSettings(Optional<URI> endpoint, String region, Optional<StaticCredentials> staticCredentials,
        int waitTimeSeconds, int batchSize, int maxConcurrentHandlers, Duration visibilityTimeout,
        Duration heartbeatInterval, int redriveMaxReceiveCount, Duration closeGrace) {

    /** SQS's longest message retention: what the DLQ keeps a dead letter for (nothing shorter expires one unseen). */
    public static final Duration MAX_RETENTION = Duration.ofDays(14);

    /** An access key id and secret for a local endpoint. The secret is never printed. */
    public record StaticCredentials(String accessKeyId, String secretAccessKey) {
        public StaticCredentials {
            if (accessKeyId == null || accessKeyId.isBlank() || secretAccessKey == null || secretAccessKey.isBlank()) {
                throw new IllegalArgumentException("static credentials need an access key id and a secret");
            }
        }

        @Override
        public String toString() {
            return "StaticCredentials[accessKeyId=" + accessKeyId + ", secretAccessKey=***]";
        }
    }

    public SqsSettings {
        Objects.requireNonNull(endpoint, "endpoint");
        if (region == null || region.isBlank()) {
            throw new IllegalArgumentException("an SQS region is required");
        }
        Objects.requireNonNull(staticCredentials, "staticCredentials");
        if (staticCredentials.isPresent() && endpoint.isEmpty()) {
            throw new IllegalArgumentException("static credentials are only for a local endpoint;"
                    + " on AWS the default credentials provider chain is used");
        }
        if (waitTimeSeconds < 0 || waitTimeSeconds > 20) {
            throw new IllegalArgumentException("waitTimeSeconds must be 0..20 (SQS limit), got " + waitTimeSeconds);
        }
        if (batchSize < 1 || batchSize > 10) {
            throw new IllegalArgumentException("batchSize must be 1..10 (SQS limit), got " + batchSize);
        }
        if (maxConcurrentHandlers < 1) {
            throw new IllegalArgumentException("maxConcurrentHandlers must be positive, got " + maxConcurrentHandlers);
        }
        Objects.requireNonNull(visibilityTimeout, "visibilityTimeout");
        if (visibilityTimeout.toSeconds() < 1 || visibilityTimeout.compareTo(SqsTimes.MAX_VISIBILITY) > 0) {
            throw new IllegalArgumentException("visibilityTimeout must be 1 s..12 h, got " + visibilityTimeout);
        }
        Objects.requireNonNull(heartbeatInterval, "heartbeatInterval");
        if (heartbeatInterval.isNegative() || heartbeatInterval.isZero()
                || heartbeatInterval.compareTo(visibilityTimeout) >= 0) {
            throw new IllegalArgumentException("heartbeatInterval must be positive and shorter than the visibility"
                    + " timeout " + visibilityTimeout + ", got " + heartbeatInterval);
        }
        if (redriveMaxReceiveCount < 0 || redriveMaxReceiveCount > 1000) {
            throw new IllegalArgumentException("redriveMaxReceiveCount must be 0 (none) or 1..1000, got "
                    + redriveMaxReceiveCount);
        }
        Objects.requireNonNull(closeGrace, "closeGrace");
    }

    /**
     * AWS defaults for {@code region}: 20 s long polling, batches of 10, 8 concurrent handlers, 30 s
     * visibility with a 10 s heartbeat, no native redrive policy, 10 s close grace.
     */
    public static SqsSettings defaults(String region) {
        return new SqsSettings(Optional.empty(), region, Optional.empty(), 20, 10, 8, Duration.ofSeconds(30),
                Duration.ofSeconds(10), 0, Duration.ofSeconds(10));
    }

    /** A local endpoint (ElasticMQ, LocalStack) with static dummy credentials. */
    public static SqsSettings local(URI endpoint) {
        return defaults("us-east-1").withEndpoint(endpoint, new StaticCredentials("idemkit", "idemkit"));
    }

    /**
     * From the process environment: {@code IDEMKIT_SQS_REGION} (else {@code AWS_REGION}, else us-east-1),
     * {@code IDEMKIT_SQS_ENDPOINT} (optional; with it, {@code IDEMKIT_SQS_ACCESS_KEY_ID} /
     * {@code IDEMKIT_SQS_SECRET_ACCESS_KEY} or dummy values), {@code IDEMKIT_SQS_WAIT_SECONDS},
     * {@code IDEMKIT_SQS_BATCH_SIZE}, {@code IDEMKIT_SQS_MAX_CONCURRENT}, {@code IDEMKIT_SQS_VISIBILITY_SECONDS},
     * {@code IDEMKIT_SQS_HEARTBEAT_SECONDS}, {@code IDEMKIT_SQS_REDRIVE_MAX_RECEIVES}.
     */
    public static SqsSettings fromEnvironment() {
        return fromEnvironment(System.getenv());
    }

    static SqsSettings fromEnvironment(Map<String, String> env) {
        String region = env.getOrDefault("IDEMKIT_SQS_REGION", env.getOrDefault("AWS_REGION", "us-east-1"));
        SqsSettings s = defaults(region);
        String endpoint = env.get("IDEMKIT_SQS_ENDPOINT");
        if (endpoint != null && !endpoint.isBlank()) {
            s = s.withEndpoint(URI.create(endpoint), new StaticCredentials(
                    env.getOrDefault("IDEMKIT_SQS_ACCESS_KEY_ID", "idemkit"),
                    env.getOrDefault("IDEMKIT_SQS_SECRET_ACCESS_KEY", "idemkit")));
        }
        int wait = intOf(env, "IDEMKIT_SQS_WAIT_SECONDS", s.waitTimeSeconds);
        int batch = intOf(env, "IDEMKIT_SQS_BATCH_SIZE", s.batchSize);
        int concurrent = intOf(env, "IDEMKIT_SQS_MAX_CONCURRENT", s.maxConcurrentHandlers);
        Duration visibility = Duration.ofSeconds(intOf(env, "IDEMKIT_SQS_VISIBILITY_SECONDS",
                (int) s.visibilityTimeout.toSeconds()));
        Duration heartbeat = Duration.ofSeconds(intOf(env, "IDEMKIT_SQS_HEARTBEAT_SECONDS",
                (int) Math.max(1, visibility.toSeconds() / 3)));
        int redrive = intOf(env, "IDEMKIT_SQS_REDRIVE_MAX_RECEIVES", 0);
        return new SqsSettings(s.endpoint, s.region, s.staticCredentials, wait, batch, concurrent, visibility,
                heartbeat, redrive, s.closeGrace);
    }

    private static int intOf(Map<String, String> env, String name, int fallback) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return fallback;
        }
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be an integer, got \"" + v + "\"", e);
        }
    }

    public SqsSettings withEndpoint(URI uri, StaticCredentials credentials) {
        return new SqsSettings(Optional.of(uri), region, Optional.of(credentials), waitTimeSeconds, batchSize,
                maxConcurrentHandlers, visibilityTimeout, heartbeatInterval, redriveMaxReceiveCount, closeGrace);
    }

    public SqsSettings withWaitTimeSeconds(int seconds) {
        return new SqsSettings(endpoint, region, staticCredentials, seconds, batchSize, maxConcurrentHandlers,
                visibilityTimeout, heartbeatInterval, redriveMaxReceiveCount, closeGrace);
    }

    public SqsSettings withBatchSize(int size) {
        return new SqsSettings(endpoint, region, staticCredentials, waitTimeSeconds, size, maxConcurrentHandlers,
                visibilityTimeout, heartbeatInterval, redriveMaxReceiveCount, closeGrace);
    }

    public SqsSettings withMaxConcurrentHandlers(int n) {
        return new SqsSettings(endpoint, region, staticCredentials, waitTimeSeconds, batchSize, n,
                visibilityTimeout, heartbeatInterval, redriveMaxReceiveCount, closeGrace);
    }

    /** Visibility timeout and heartbeat together, since the heartbeat must stay below the timeout. */
    public SqsSettings withVisibility(Duration timeout, Duration heartbeat) {
        return new SqsSettings(endpoint, region, staticCredentials, waitTimeSeconds, batchSize,
                maxConcurrentHandlers, timeout, heartbeat, redriveMaxReceiveCount, closeGrace);
    }

    public SqsSettings withRedriveMaxReceiveCount(int n) {
        return new SqsSettings(endpoint, region, staticCredentials, waitTimeSeconds, batchSize,
                maxConcurrentHandlers, visibilityTimeout, heartbeatInterval, n, closeGrace);
    }

    public SqsSettings withCloseGrace(Duration grace) {
        return new SqsSettings(endpoint, region, staticCredentials, waitTimeSeconds, batchSize,
                maxConcurrentHandlers, visibilityTimeout, heartbeatInterval, redriveMaxReceiveCount, grace);
    }
}
