package dev.idemkit.spring.quickstart;

import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

@Component
public class CreditListener {
    private final JdbcTemplate jdbc;

    public CreditListener(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    // A plain listener. With idemkit.rabbit.idempotent-listeners=true it runs once per AMQP
    // message_id, in one transaction with its inbox key; a failure is retried, then dead-lettered
    // into <queue>.dlq with the reason. Do not also call IdempotentInbox here: that records a
    // second key for the same message.
    @RabbitListener(queues = "${credits.queue}")
    public void onCredit(String body) {                      // "account:amount"
        String[] f = body.split(":");
        jdbc.update("UPDATE accounts SET balance = balance + ? WHERE id = ?", Long.parseLong(f[1]), f[0]);
    }
}
