package dev.idemkit.spring.kafkasample;

import jakarta.annotation.PostConstruct;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.annotation.KafkaListener;

/**
 * The service's listener: a value {@code <account>:<amount>} credits the account and logs the credit (in the
 * listener's transaction); {@code once:<account>:<amount>} fails its first attempt (a marker committed on its own says
 * it did); {@code hold:<account>:<amount>} fails its first attempt and holds its next one until a row in
 * {@code released} names it; {@code poison:<account>} is refused for good ({@code IllegalArgumentException}). Its
 * tables are created at start, before the container runs.
 */
public class KafkaCredits {
    /** Called inside the effect, after the credit's writes and before the commit (the crash test's kill point). */
    public static volatile Runnable insideEffect = () -> { };

    private final JdbcTemplate jdbc;
    private final DataSource dataSource;

    public KafkaCredits(JdbcTemplate jdbc, DataSource dataSource) {
        this.jdbc = jdbc;
        this.dataSource = dataSource;
    }

    @PostConstruct
    void tables() {
        jdbc.execute("CREATE TABLE IF NOT EXISTS accounts (id text PRIMARY KEY, balance bigint NOT NULL)");
        jdbc.execute("CREATE TABLE IF NOT EXISTS credit_log (seq bigserial PRIMARY KEY, account text NOT NULL,"
                + " message_id text, topic text NOT NULL, kafka_partition int NOT NULL, kafka_offset bigint NOT NULL)");
        jdbc.execute("CREATE TABLE IF NOT EXISTS failed_once (id text PRIMARY KEY)");
        jdbc.execute("CREATE TABLE IF NOT EXISTS released (id text PRIMARY KEY)");
    }

    @KafkaListener(id = "kafka-credits", topics = "${sample.topic}", groupId = "${sample.group}",
            properties = "${sample.listener-properties:}")
    public void onCredit(ConsumerRecord<String, String> record) throws SQLException {
        Header h = record.headers().lastHeader("message_id");
        String messageId = h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
        String[] parts = record.value().split(":");
        if (parts[0].equals("poison")) {
            throw new IllegalArgumentException("credit refused for good: account " + parts[1] + " is closed");
        }
        if (parts[0].equals("once")) {
            if (firstFailure(messageId)) {
                throw new IllegalStateException("the first attempt of " + messageId + " fails");
            }
            parts = new String[] {parts[1], parts[2]};
        } else if (parts[0].equals("hold")) {
            if (firstFailure(messageId)) {
                throw new IllegalStateException("the first attempt of " + messageId + " fails");
            }
            awaitRelease(messageId); // the next attempt is held, on whatever thread runs it, until the test says
            parts = new String[] {parts[1], parts[2]};
        }
        jdbc.update("INSERT INTO accounts (id, balance) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET balance ="
                + " accounts.balance + excluded.balance", parts[0], Long.parseLong(parts[1]));
        jdbc.update("INSERT INTO credit_log (account, message_id, topic, kafka_partition, kafka_offset) VALUES"
                + " (?, ?, ?, ?, ?)", parts[0], messageId, record.topic(), record.partition(), record.offset());
        insideEffect.run();
    }

    /** Waits (at most 60 s) until a row in {@code released} names {@code messageId}. */
    private void awaitRelease(String messageId) {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        while (jdbc.queryForObject("SELECT count(*) FROM released WHERE id = ?", Long.class, messageId) == 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(messageId + " was never released");
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while holding " + messageId, e);
            }
        }
    }

    /** A marker committed on its own connection: true the first time for {@code messageId}. */
    private boolean firstFailure(String messageId) throws SQLException {
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps = c.prepareStatement(
                        "INSERT INTO failed_once (id) VALUES (?) ON CONFLICT DO NOTHING")) {
            c.setAutoCommit(true);
            ps.setString(1, messageId);
            return ps.executeUpdate() == 1;
        }
    }
}
