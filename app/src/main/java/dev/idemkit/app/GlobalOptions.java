package dev.idemkit.app;

import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.config.Sources;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * The settings every subcommand accepts. A flag wins over the environment variable of the same name
 * ({@code --pg-url} / {@code IDEMKIT_PG_URL}), which wins over the properties file ({@code pg.url}).
 */
public final class GlobalOptions {
    @Option(names = "--config", paramLabel = "FILE", description = "properties file with settings (env IDEMKIT_CONFIG)")
    String config;

    @Option(names = "--store", paramLabel = "postgres|redis", description = "dedup store (default postgres)")
    String store;

    @Option(names = "--transport", paramLabel = "rabbit|sqs|kafka", description = "message transport (default sqs)")
    String transport;

    @Option(names = "--pg-url", paramLabel = "JDBC_URL", description = "PostgreSQL; absent: embedded PostgreSQL")
    String pgUrl;

    @Option(names = "--pg-user", description = "PostgreSQL user (default postgres)")
    String pgUser;

    @Option(names = "--pg-password", description = "PostgreSQL password (prefer IDEMKIT_PG_PASSWORD)")
    String pgPassword;

    @Option(names = "--pg-schema", description = "schema for idemkit's and the app's tables (default public)")
    String pgSchema;

    @Option(names = "--pg-pool-size", paramLabel = "N", description = "PostgreSQL connections per process (default 32)")
    Integer pgPoolSize;

    @Option(names = "--redis-url", paramLabel = "URL", description = "default redis://127.0.0.1:6379")
    String redisUrl;

    @Option(names = "--redis-prefix", paramLabel = "PREFIX", description = "first segment of every Redis key (default idemkit)")
    String redisPrefix;

    @Option(names = "--rabbit-uri", paramLabel = "URI", description = "default amqp://guest:guest@127.0.0.1:5672/%%2F")
    String rabbitUri;

    @Option(names = "--rabbit-queue-type", paramLabel = "quorum|classic", description = "type of the queues idemkit declares (default quorum; an existing queue of another type is refused)")
    String rabbitQueueType;

    @Option(names = "--rabbit-addresses", paramLabel = "HOST:PORT,...", description = "RabbitMQ cluster nodes, tried in this order (default: the uri's host)")
    String rabbitAddresses;

    @Option(names = "--rabbit-delivery-limit", description = "quorum queues: deliveries of a message that comes back unsettled before the broker dead-letters it (default 20)")
    String rabbitDeliveryLimit;

    @Option(names = "--rabbit-prefetch", description = "RabbitMQ: unacknowledged deliveries per consumer channel (default 100)")
    String rabbitPrefetch;

    @Option(names = "--kafka-bootstrap-servers", paramLabel = "HOST:PORT,...", description = "Kafka brokers (default 127.0.0.1:9092)")
    String kafkaBootstrapServers;

    @Option(names = "--kafka-consumption", paramLabel = "group|share", description = "Kafka: a consumer group per work topic (partitions in order, the default) or a share group (queue semantics, no order)")
    String kafkaConsumption;

    @Option(names = "--kafka-offsets", paramLabel = "kafka|database", description = "Kafka consumer groups: positions in Kafka's committed offsets only (the default), or also in the PostgreSQL inbox's transactions (the commit of an effect is the commit of its offset)")
    String kafkaOffsets;

    @Option(names = "--sqs-endpoint", paramLabel = "URL", description = "SQS endpoint; absent: embedded ElasticMQ")
    String sqsEndpoint;

    @Option(names = "--sqs-region", description = "AWS region (default us-east-1)")
    String sqsRegion;

    @Option(names = "--http-port", description = "HTTP port for serve (default 8080; 0 picks a free one)")
    String httpPort;

    @Option(names = "--http-header-timeout", description = "serve: a request's headers must arrive within this, else"
            + " the connection is dropped (default 10s)")
    String httpHeaderTimeout;

    @Option(names = "--http-body-timeout", description = "serve: a request's body must arrive within this after its"
            + " headers, else 408 (default 10s)")
    String httpBodyTimeout;

    @Option(names = "--http-idle-timeout", description = "serve: a connection silent this long is closed (default 30s)")
    String httpIdleTimeout;

    @Option(names = "--http-max-connections", description = "serve: open connections at most; more wait in the"
            + " backlog (default 512)")
    String httpMaxConnections;

    @Option(names = "--http-max-body-bytes", description = "serve: larger request bodies get 413 before they are read"
            + " (default 262144)")
    String httpMaxBodyBytes;

    @Option(names = "--http-workers", description = "serve: threads running requests that arrived whole (default 128)")
    String httpWorkers;

    @Option(names = "--api-key", paramLabel = "CLIENT=KEY", description = "client credential, repeatable (env IDEMKIT_API_KEYS=a=k1,b=k2)")
    List<String> apiKeys = new ArrayList<>();

    @Option(names = "--operator-key", paramLabel = "OPERATOR=KEY", description = "operator credential for the"
            + " dead-letter console, repeatable (env IDEMKIT_OPERATOR_KEYS=ana=k1,bo=k2)")
    List<String> operatorKeys = new ArrayList<>();

    @Option(names = "--max-attempts", description = "deliveries before dead-lettering (default 3)")
    String maxAttempts;

    @Option(names = "--backoff-base", description = "first retry ceiling, e.g. 1s (default 1s)")
    String backoffBase;

    @Option(names = "--backoff-cap", description = "largest retry delay, e.g. 60s (default 60s)")
    String backoffCap;

    @Option(names = "--dlq-alert-threshold", description = "alert when a DLQ holds more than this (default 10)")
    String dlqAlertThreshold;

    @Option(names = "--inbox-retention", description = "how long processed keys are kept (default 7d)")
    String inboxRetention;

    @Option(names = "--retention-every", description = "time between serve's retention runs (default 10m; a bare number is seconds)")
    String retentionEvery;

    @Option(names = "--outbox-sent-retention", description = "how long a sent outbox message is kept (default 1d)")
    String outboxSentRetention;

    @Option(names = "--retention-batch-size", description = "rows per retention batch, each its own transaction (default 1000)")
    String retentionBatchSize;

    @Option(names = "--retention-pause", description = "pause after each retention batch, leaving the database to the writers (default 10ms)")
    String retentionPause;

    @Option(names = "--retention-duty-cycle", description = "the largest share of the time a retention run keeps the database working (default 0.1)")
    String retentionDutyCycle;

    @Option(names = "--dlq-retention", description = "how old a dead letter may be for a redrive on one approval (default 4d; older ones need a second approval; at most 14d on SQS)")
    String dlqRetention;

    @Option(names = "--concurrency", description = "deliveries processed at once per consumer (default 4)")
    String concurrency;

    Map<String, String> flags() {
        Map<String, String> f = new LinkedHashMap<>();
        put(f, "config", config);
        put(f, "store", store);
        put(f, "transport", transport);
        put(f, "pg.url", pgUrl);
        put(f, "pg.user", pgUser);
        put(f, "pg.password", pgPassword);
        put(f, "pg.schema", pgSchema);
        put(f, "pg.pool.size", pgPoolSize == null ? null : pgPoolSize.toString());
        put(f, "redis.url", redisUrl);
        put(f, "redis.prefix", redisPrefix);
        put(f, "rabbit.uri", rabbitUri);
        put(f, "rabbit.queue-type", rabbitQueueType);
        put(f, "rabbit.addresses", rabbitAddresses);
        put(f, "rabbit.delivery-limit", rabbitDeliveryLimit);
        put(f, "rabbit.prefetch", rabbitPrefetch);
        put(f, "sqs.endpoint", sqsEndpoint);
        put(f, "sqs.region", sqsRegion);
        put(f, "kafka.bootstrap-servers", kafkaBootstrapServers);
        put(f, "kafka.consumption", kafkaConsumption);
        put(f, "kafka.offsets", kafkaOffsets);
        put(f, "http.port", httpPort);
        put(f, "http.header-timeout", httpHeaderTimeout);
        put(f, "http.body-timeout", httpBodyTimeout);
        put(f, "http.idle-timeout", httpIdleTimeout);
        put(f, "http.max-connections", httpMaxConnections);
        put(f, "http.max-body-bytes", httpMaxBodyBytes);
        put(f, "http.workers", httpWorkers);
        put(f, "api.keys", apiKeys.isEmpty() ? null : String.join(",", apiKeys));
        put(f, "operator.keys", operatorKeys.isEmpty() ? null : String.join(",", operatorKeys));
        put(f, "max.attempts", maxAttempts);
        put(f, "backoff.base", backoffBase);
        put(f, "backoff.cap", backoffCap);
        put(f, "dlq.alert.threshold", dlqAlertThreshold);
        put(f, "inbox.retention", inboxRetention);
        put(f, "dlq.retention", dlqRetention);
        // serve's old --retention-every took seconds: a bare number still means that
        put(f, "retention.every", retentionEvery != null && retentionEvery.strip().matches("[0-9]+")
                ? retentionEvery.strip() + "s" : retentionEvery);
        put(f, "outbox.sent-retention", outboxSentRetention);
        put(f, "retention.batch-size", retentionBatchSize);
        put(f, "retention.pause", retentionPause);
        put(f, "retention.duty-cycle", retentionDutyCycle);
        put(f, "concurrency", concurrency);
        return f;
    }

    /**
     * @throws dev.idemkit.app.config.ConfigException naming the bad setting
     */
    public AppSettings resolve(Map<String, String> environment) {
        return AppSettings.resolve(Sources.of(flags(), environment));
    }

    private static void put(Map<String, String> f, String k, String v) {
        if (v != null) {
            f.put(k, v);
        }
    }
}
