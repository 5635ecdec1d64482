package dev.idemkit.spring;

import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.jdbc.core.JdbcTemplate;

/** The sample services' accounts and credits as the tests drive them: an account of the test's own, its balance, a send. */
final class SampleAccounts {
    private SampleAccounts() {
    }

    /** A new account with balance 0. */
    static String account(JdbcTemplate jdbc) {
        String id = "acc-" + UUID.randomUUID();
        jdbc.update("INSERT INTO accounts (id, balance) VALUES (?, 0)", id);
        return id;
    }

    static long balance(JdbcTemplate jdbc, String account) {
        Long b = jdbc.queryForObject("SELECT balance FROM accounts WHERE id = ?", Long.class, account);
        return b == null ? 0 : b;
    }

    /** A text message to {@code queue} through the default exchange, with {@code messageId} (none when null). */
    static void send(RabbitTemplate rabbit, String queue, String messageId, String body) {
        MessageProperties p = new MessageProperties();
        if (messageId != null) {
            p.setMessageId(messageId);
        }
        p.setContentType(MessageProperties.CONTENT_TYPE_TEXT_PLAIN);
        rabbit.send("", queue, new Message(body.getBytes(StandardCharsets.UTF_8), p));
    }
}
