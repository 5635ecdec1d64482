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
        private int maxAttempts = 3;

        /** The first retry's ceiling; doubled per retry, full jitter. */
        private Duration baseDelay = Duration.ofMillis(200);

        /** The longest wait between two attempts. */
        private Duration maxDelay = Duration.ofSeconds(10);

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
        /**
         * Whether every @RabbitListener of Boot's rabbitListenerContainerFactory runs through idemkit's inbox, retry
         * and dead-letter queue (keyed by the queue and the AMQP message_id).
         */
        private boolean idempotentListeners = false;

        /** Only these queues' listeners (all of them when empty). */
        private List<String> queues = new ArrayList<>();

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
}
