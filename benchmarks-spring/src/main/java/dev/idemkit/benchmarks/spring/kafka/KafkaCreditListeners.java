package dev.idemkit.benchmarks.spring.kafka;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.annotation.BackOff;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.annotation.RetryableTopic;
import org.springframework.transaction.annotation.Transactional;

/**
 * The Kafka services of {@link SpringKafkaListenerBenchmark}, each a {@code @KafkaListener} crediting
 * {@code account:amount} values, keyed by the {@code message_id} header: the same method made idempotent by
 * {@code idemkit.kafka.idempotent-listeners=true}, the baseline a Spring user writes without idemkit, and that baseline
 * with Spring Kafka's non-blocking retries ({@code @RetryableTopic}, the peer of issue 33).
 */
public final class KafkaCreditListeners {
    private KafkaCreditListeners() {}

    static void credit(JdbcTemplate jdbc, String value) {
        int colon = value.indexOf(':');
        jdbc.update("UPDATE accounts SET balance = balance + ? WHERE id = ?", Long.parseLong(value.substring(colon + 1)),
                value.substring(0, colon));
    }

    /** The hand-written dedup, in the caller's transaction: the id inserted, the credit only when it was. */
    static void dedupAndCredit(JdbcTemplate jdbc, ConsumerRecord<String, String> record) {
        if (jdbc.update("INSERT INTO processed (message_id) VALUES (?) ON CONFLICT DO NOTHING", messageId(record))
                == 0) {
            return; // a duplicate: its offset is committed, nothing applied
        }
        credit(jdbc, record.value());
    }

    static String messageId(ConsumerRecord<?, ?> record) {
        Header h = record.headers().lastHeader("message_id");
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    /** The listener idemkit makes idempotent: it knows nothing of idemkit. */
    @SpringBootConfiguration
    @EnableAutoConfiguration(excludeName = "org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration")
    @Import(IdemkitService.Listener.class)
    public static class IdemkitService {
        public static class Listener {
            private final JdbcTemplate jdbc;

            public Listener(JdbcTemplate jdbc) {
                this.jdbc = jdbc;
            }

            @KafkaListener(id = "credits", topics = "${bench.topic}", groupId = "${bench.group}",
                    autoStartup = "false")
            public void onCredit(ConsumerRecord<String, String> record) {
                credit(jdbc, record.value());
            }
        }
    }

    /**
     * The baseline: a {@code @Transactional} {@code @KafkaListener} that inserts the message id with
     * {@code INSERT ... ON CONFLICT DO NOTHING} and credits only when the insert did, in one JDBC transaction that
     * commits before the container commits the offset. No retry schedule, no dead letters, no check of a reused id's
     * value: less than idemkit does, which makes it the fair floor.
     */
    @SpringBootConfiguration
    @EnableAutoConfiguration(excludeName = "org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration")
    @Import(HandWrittenService.Listener.class)
    public static class HandWrittenService {
        public static class Listener {
            private final JdbcTemplate jdbc;

            public Listener(JdbcTemplate jdbc) {
                this.jdbc = jdbc;
            }

            @KafkaListener(id = "credits", topics = "${bench.topic}", groupId = "${bench.group}",
                    autoStartup = "false")
            @Transactional
            public void onCredit(ConsumerRecord<String, String> record) {
                dedupAndCredit(jdbc, record);
            }
        }
    }

    /**
     * The hand-written baseline with Spring Kafka's own non-blocking retries, as its reference documentation shows them:
     * {@code @RetryableTopic} with its defaults (3 attempts, retry topics {@code <topic>-retry-<n>} with a 1 s back-off
     * doubling, then {@code <topic>-dlt}), the topics created by Spring; the dedup and the credit in one
     * {@code @Transactional} JDBC transaction per attempt, rolled back when the attempt fails.
     */
    @SpringBootConfiguration
    @EnableAutoConfiguration(excludeName = "org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration")
    @Import(RetryableTopicService.Listener.class)
    public static class RetryableTopicService {
        public static class Listener {
            private final JdbcTemplate jdbc;

            public Listener(JdbcTemplate jdbc) {
                this.jdbc = jdbc;
            }

            @KafkaListener(id = "credits", topics = "${bench.topic}", groupId = "${bench.group}",
                    autoStartup = "false")
            @RetryableTopic(backOff = @BackOff(delay = 1000, multiplier = 2.0))
            @Transactional
            public void onCredit(ConsumerRecord<String, String> record) {
                dedupAndCredit(jdbc, record);
            }
        }
    }
}
