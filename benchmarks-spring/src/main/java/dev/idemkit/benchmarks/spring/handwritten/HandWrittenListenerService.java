package dev.idemkit.benchmarks.spring.handwritten;

import dev.idemkit.benchmarks.spring.BenchQueue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.support.AmqpHeaders;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.transaction.annotation.Transactional;

/**
 * The baseline: what a Spring user writes without idemkit. A {@code @Transactional} {@code @RabbitListener} that
 * inserts the message id with {@code INSERT ... ON CONFLICT DO NOTHING} and credits only when the insert did, in one
 * JDBC transaction that commits before the container acknowledges. No retry schedule, no dead letters, no check of a
 * reused id's body: less than idemkit does, which is what makes it the fair floor.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({BenchQueue.class, HandWrittenListenerService.CreditListener.class})
public class HandWrittenListenerService {
    /** Body {@code account:amount}, keyed by the AMQP message id. */
    public static class CreditListener {
        private final JdbcTemplate jdbc;

        public CreditListener(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
        }

        @RabbitListener(id = "credits", queues = "${bench.queue}", autoStartup = "false")
        @Transactional
        public void onCredit(String body, @Header(AmqpHeaders.MESSAGE_ID) String messageId) {
            if (jdbc.update("INSERT INTO processed (message_id) VALUES (?) ON CONFLICT DO NOTHING", messageId) == 0) {
                return; // a duplicate: acknowledged, nothing applied
            }
            int colon = body.indexOf(':');
            jdbc.update("UPDATE accounts SET balance = balance + ? WHERE id = ?",
                    Long.parseLong(body.substring(colon + 1)), body.substring(0, colon));
        }
    }
}
