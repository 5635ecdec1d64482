package dev.idemkit.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The {@code idemkit.*} properties of the starter (IDEs complete them from the generated metadata). */
@ConfigurationProperties(prefix = "idemkit")
public class IdemkitProperties {
    /** Whether the starter configures anything at all. */
    private boolean enabled = true;

    private final Postgres postgres = new Postgres();
    private final Retry retry = new Retry();
    private final Rabbit rabbit = new Rabbit();
    private final Kafka kafka = new Kafka();
    private final Http http = new Http();
    private final Retention retention = new Retention();
    private final Outbox outbox = new Outbox();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Postgres getPostgres() {
        return postgres;
    }

    public Retry getRetry() {
        return retry;
    }

    public Rabbit getRabbit() {
        return rabbit;
    }

    public Http getHttp() {
        return http;
    }

    public Kafka getKafka() {
        return kafka;
    }

    public Retention getRetention() {
        return retention;
    }

    public Outbox getOutbox() {
        return outbox;
    }

    /**
     * The transactional outbox: {@code IdemkitOutbox} appends an event in the service's transaction, and a relay the
     * starter runs publishes what committed, in commit order per ordering key, through idemkit's transport.
     */
    public static class Outbox {
        /** Whether the outbox and its relay are configured (the relay needs a transport: idemkit-adapters-rabbit). */
        private boolean enabled = false;

        /** Where each event type is published: {@code idemkit.outbox.destinations.order-placed=orders.placed}. */
        private java.util.Map<String, String> destinations = new java.util.LinkedHashMap<>();

        /**
         * Publishes of one row ({@code max-attempts}, 10) before it is parked (it then blocks its ordering key until an
         * operator acts), and the backoff between them ({@code base-delay} 1s, doubled per retry with full jitter, up
         * to {@code max-delay} 60s).
         */
        private final Retry retry = new Retry(10, Duration.ofSeconds(1), Duration.ofSeconds(60));

        /** The longest wait between two relay passes when no commit notification arrives. */
        private Duration pollInterval = Duration.ofSeconds(1);

        /** Parked rows above which health says {@code alert: true} (0: any parked row). */
        private int parkedAlertThreshold = 0;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Retry getRetry() {
            return retry;
        }

        public java.util.Map<String, String> getDestinations() {
            return destinations;
        }

        public void setDestinations(java.util.Map<String, String> destinations) {
            this.destinations = destinations;
        }

        public Duration getPollInterval() {
            return pollInterval;
        }

        public void setPollInterval(Duration pollInterval) {
            this.pollInterval = pollInterval;
        }

        public int getParkedAlertThreshold() {
            return parkedAlertThreshold;
        }

        public void setParkedAlertThreshold(int parkedAlertThreshold) {
            this.parkedAlertThreshold = parkedAlertThreshold;
        }
    }

    /**
     * Retention of idemkit's tables, run by the starter on a thread of its own: inbox keys older than {@code inbox},
     * Idempotency-Key records past their expiry (completion + {@code idemkit.http.ttl}) and outbox rows sent more than
     * {@code sent-outbox} ago, in short batches that skip rows a writer holds.
     */
    public static class Retention {
        /** Whether the starter deletes what is past retention (false: you purge the tables yourself). */
        private boolean enabled = true;

        /** The dedup window: how long an inbox key is kept (a message redelivered later would run again). */
        private Duration inbox = Duration.ofDays(7);

        /** How long an outbox row is kept after it was sent (unsent rows are never deleted by retention). */
        private Duration sentOutbox = Duration.ofDays(1);

        /** Time between two runs (the first one after it too); a run goes on until caught up. */
        private Duration every = Duration.ofMinutes(10);

        /** Rows per batch, each batch one short transaction. */
        private int batchSize = 1000;

        /** The shortest pause after each batch. */
        private Duration pause = Duration.ofMillis(10);

        /**
         * The largest share of the time a run keeps the database working, in (0, 1]: after a batch that took t it
         * pauses at least t * (1 - duty-cycle) / duty-cycle, so the service's writers keep their pace.
         */
        private double dutyCycle = 0.1;

        public double getDutyCycle() {
            return dutyCycle;
        }

        public void setDutyCycle(double dutyCycle) {
            this.dutyCycle = dutyCycle;
        }

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getInbox() {
            return inbox;
        }

        public void setInbox(Duration inbox) {
            this.inbox = inbox;
        }

        public Duration getSentOutbox() {
            return sentOutbox;
        }

        public void setSentOutbox(Duration sentOutbox) {
            this.sentOutbox = sentOutbox;
        }

        public Duration getEvery() {
            return every;
        }

        public void setEvery(Duration every) {
            this.every = every;
        }

        public int getBatchSize() {
            return batchSize;
        }

        public void setBatchSize(int batchSize) {
            this.batchSize = batchSize;
        }

        public Duration getPause() {
            return pause;
        }

        public void setPause(Duration pause) {
            this.pause = pause;
        }
    }

    /** The Idempotency-Key protocol in front of Spring MVC endpoints. */
    public static class Http {
        /** Path patterns (e.g. /payments/**) whose requests need the protocol; none: the filter is not installed. */
        private List<String> paths = new ArrayList<>();

        /** The methods it applies to on those paths. */
        private List<String> methods = new ArrayList<>(List.of("POST", "PATCH"));

        /**
         * A request header naming the client when there is no authenticated principal (e.g. an API gateway's); keys are
         * kept per client. Unset: an authenticated principal is required.
         */
        private String clientHeader;

        /** Whether a request without an Idempotency-Key is refused (400) or runs without the protocol. */
        private boolean keyRequired = true;

        /** How long a completed response is kept for replay. */
        private Duration ttl = Duration.ofHours(24);

        /** How long a retry waits for the first request with its key before a 409. */
        private Duration waitBound = Duration.ofSeconds(10);

        /**
         * The largest request body on those paths (1 MiB by default): the body is buffered to fingerprint it, so a
         * larger one is answered 413 before it is read (by its Content-Length) or once one byte more has arrived.
         */
        private org.springframework.util.unit.DataSize maxBodySize = org.springframework.util.unit.DataSize.ofMegabytes(1);

        public org.springframework.util.unit.DataSize getMaxBodySize() {
            return maxBodySize;
        }

        public void setMaxBodySize(org.springframework.util.unit.DataSize maxBodySize) {
            this.maxBodySize = maxBodySize;
        }

        public List<String> getPaths() {
            return paths;
        }

        public void setPaths(List<String> paths) {
            this.paths = paths;
        }

        public List<String> getMethods() {
            return methods;
        }

        public void setMethods(List<String> methods) {
            this.methods = methods;
        }

        public String getClientHeader() {
            return clientHeader;
        }

        public void setClientHeader(String clientHeader) {
            this.clientHeader = clientHeader;
        }

        public boolean isKeyRequired() {
            return keyRequired;
        }

        public void setKeyRequired(boolean keyRequired) {
            this.keyRequired = keyRequired;
        }

        public Duration getTtl() {
            return ttl;
        }

        public void setTtl(Duration ttl) {
            this.ttl = ttl;
        }

        public Duration getWaitBound() {
            return waitBound;
        }

        public void setWaitBound(Duration waitBound) {
            this.waitBound = waitBound;
        }
    }

    /** Where idemkit's tables live. */
    public static class Postgres {
        /**
         * Schema of idemkit's tables (processed_messages, ...): the data source's current schema when not set
         * ("public" on a default PostgreSQL).
         */
        private String schema;

        /**
         * Who creates idemkit's tables: "idemkit" applies its migrations at start-up (history table
         * idemkit_schema_history); "none" leaves it to you (your Flyway, location classpath:db/migration/idemkit,
         * with a history table of its own).
         */
        private Migrations migrations = Migrations.IDEMKIT;

        public String getSchema() {
            return schema;
        }

        public void setSchema(String schema) {
            this.schema = schema;
        }

        public Migrations getMigrations() {
            return migrations;
        }

        public void setMigrations(Migrations migrations) {
            this.migrations = migrations;
        }
    }

    /** The RabbitMQ queue type of the queues idemkit declares. */
    public enum QueueType {
        QUORUM,
        CLASSIC
    }

    /** Who applies idemkit's migrations. */
    public enum Migrations {
        /** idemkit, at start-up. */
        IDEMKIT,
        /** nobody: the service's own Flyway or a DBA. */
        NONE
    }

    /** Attempts and backoff of the idempotent listeners (the seed's defaults: 3 attempts). */
    public static class Retry {
        /** How many times a failing message is attempted before it is dead-lettered (1 = never retried). */
        private int maxAttempts;

        /** The first retry's ceiling; doubled per retry, full jitter. */
        private Duration baseDelay;

        /** The longest wait between two attempts. */
        private Duration maxDelay;

        /** The idempotent listeners' defaults: 3 attempts, 200ms, 10s. */
        public Retry() {
            this(3, Duration.ofMillis(200), Duration.ofSeconds(10));
        }

        Retry(int maxAttempts, Duration baseDelay, Duration maxDelay) {
            this.maxAttempts = maxAttempts;
            this.baseDelay = baseDelay;
            this.maxDelay = maxDelay;
        }

        /**
         * The domain's policy of these values: exponential backoff with full jitter.
         *
         * @throws IllegalArgumentException when a value is outside the policy's bounds
         */
        dev.idemkit.domain.retry.RetryPolicy toPolicy() {
            return dev.idemkit.domain.retry.RetryPolicy.defaults().withMaxAttempts(maxAttempts)
                    .withBackoff(dev.idemkit.domain.retry.Backoff.exponential(baseDelay, maxDelay,
                            dev.idemkit.domain.retry.Jitter.FULL));
        }

        public int getMaxAttempts() {
            return maxAttempts;
        }

        public void setMaxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
        }

        public Duration getBaseDelay() {
            return baseDelay;
        }

        public void setBaseDelay(Duration baseDelay) {
            this.baseDelay = baseDelay;
        }

        public Duration getMaxDelay() {
            return maxDelay;
        }

        public void setMaxDelay(Duration maxDelay) {
            this.maxDelay = maxDelay;
        }
    }

    /** Spring AMQP listeners. */
    public static class Rabbit {
        /** Dead letters in one dead-letter queue above which the health indicator says alert (the seed's 10). */
        private int alertThreshold = 10;

        public int getAlertThreshold() {
            return alertThreshold;
        }

        public void setAlertThreshold(int alertThreshold) {
            this.alertThreshold = alertThreshold;
        }

        /**
         * Whether every @RabbitListener of Boot's rabbitListenerContainerFactory runs through idemkit's inbox, retry
         * and dead-letter queue (keyed by the queue and the AMQP message_id).
         */
        private boolean idempotentListeners = false;

        /** Only these queues' listeners (all of them when empty). */
        private List<String> queues = new ArrayList<>();

        /**
         * The type of the queues idemkit declares for each listener's queue: its retry buckets, hold queue and
         * dead-letter queue (the listener's own queue is the service's). Quorum, the durable type of a cluster, by
         * default; classic to keep an existing classic {@code <queue>.dlq}.
         */
        private QueueType queueType = QueueType.QUORUM;

        /**
         * The largest message body a listener is given; a bigger one is dead-lettered at once with the reason (256 KiB
         * by default, SQS's own limit and idemkit's consumers' default).
         */
        private org.springframework.util.unit.DataSize maxBodySize = org.springframework.util.unit.DataSize.ofKilobytes(256);

        /**
         * With consumer batching ({@code spring.rabbitmq.listener.simple.consumer-batch-enabled}), how long a batch
         * listener's container collects one batch at most before it hands over what it has (the container factory's
         * {@code batchReceiveTimeout}). Spring's own bound is per message ({@code receiveTimeout}, 1 s): a trickle
         * can hold the first message of a batch for {@code batch-size} seconds, unacknowledged. 0 leaves Spring's.
         */
        private java.time.Duration batchReceiveTimeout = java.time.Duration.ofMillis(100);

        public java.time.Duration getBatchReceiveTimeout() {
            return batchReceiveTimeout;
        }

        public void setBatchReceiveTimeout(java.time.Duration batchReceiveTimeout) {
            if (batchReceiveTimeout == null || batchReceiveTimeout.isNegative()) {
                throw new IllegalArgumentException("idemkit.rabbit.batch-receive-timeout must be 0 or positive, got "
                        + batchReceiveTimeout);
            }
            this.batchReceiveTimeout = batchReceiveTimeout;
        }

        public org.springframework.util.unit.DataSize getMaxBodySize() {
            return maxBodySize;
        }

        public void setMaxBodySize(org.springframework.util.unit.DataSize maxBodySize) {
            this.maxBodySize = maxBodySize;
        }

        public QueueType getQueueType() {
            return queueType;
        }

        public void setQueueType(QueueType queueType) {
            this.queueType = queueType;
        }

        public boolean isIdempotentListeners() {
            return idempotentListeners;
        }

        public void setIdempotentListeners(boolean idempotentListeners) {
            this.idempotentListeners = idempotentListeners;
        }

        public List<String> getQueues() {
            return queues;
        }

        public void setQueues(List<String> queues) {
            this.queues = queues;
        }
    }

    /** Idempotent {@code @KafkaListener}s (spring-kafka and idemkit-adapters-kafka on the class path). */
    public static class Kafka {
        /**
         * Whether every @KafkaListener of Boot's kafkaListenerContainerFactory runs through idemkit's inbox, retry
         * topics and dead-letter topic (keyed by the consumer group, the topic and the message_id header).
         */
        private boolean idempotentListeners = false;

        /** Only these topics' listeners (all of them when empty). */
        private List<String> topics = new ArrayList<>();

        /** The largest record value a listener is given; a bigger one is dead-lettered at once with the reason. */
        private org.springframework.util.unit.DataSize maxBodySize = org.springframework.util.unit.DataSize.ofKilobytes(256);

        /**
         * The retry topics' delays ({@code <topic>.retry.<n>s}), whole seconds, ascending: a retry waits in the
         * longest one not longer than its backoff. idemkit-adapters-kafka's by default (1s, 5s, 30s, 2m, 10m).
         */
        private List<java.time.Duration> retryBuckets = new ArrayList<>();

        public boolean isIdempotentListeners() {
            return idempotentListeners;
        }

        public void setIdempotentListeners(boolean idempotentListeners) {
            this.idempotentListeners = idempotentListeners;
        }

        public List<String> getTopics() {
            return topics;
        }

        public void setTopics(List<String> topics) {
            this.topics = topics;
        }

        public org.springframework.util.unit.DataSize getMaxBodySize() {
            return maxBodySize;
        }

        public void setMaxBodySize(org.springframework.util.unit.DataSize maxBodySize) {
            this.maxBodySize = maxBodySize;
        }

        public List<java.time.Duration> getRetryBuckets() {
            return retryBuckets;
        }

        public void setRetryBuckets(List<java.time.Duration> retryBuckets) {
            this.retryBuckets = retryBuckets;
        }
    }

    /** A size property in bytes, refused at start-up outside 1 B .. 2 GB (a buffer holds it). */
    static int bytes(String property, org.springframework.util.unit.DataSize size) {
        long bytes = size == null ? -1 : size.toBytes();
        if (bytes < 1 || bytes > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException(property + " must be between 1B and 2GB, got " + size);
        }
        return (int) bytes;
    }
}
