package dev.idemkit.benchmarks.spring.idemkitbatch;

import java.util.List;
import dev.idemkit.benchmarks.spring.BenchQueue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The batch mode: a batch {@code @RabbitListener} under Spring AMQP's consumer batching
 * ({@code spring.rabbitmq.listener.simple.consumer-batch-enabled=true}, {@code batch-size}), made idempotent by
 * {@code idemkit.rabbit.idempotent-listeners=true}: a batch's keys and the listener's call for its new messages in one
 * transaction, acknowledged after the commit. The listener credits every body of the list with one statement.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({BenchQueue.class, IdemkitBatchListenerService.CreditListener.class})
public class IdemkitBatchListenerService {
    /** Bodies {@code account:amount}; knows nothing of idemkit. */
    public static class CreditListener {
        private final JdbcTemplate jdbc;

        public CreditListener(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
        }

        @RabbitListener(id = "credits", queues = "${bench.queue}", autoStartup = "false", batch = "true")
        public void onCredits(List<String> bodies) {
            // one statement for the batch, accounts in a fixed order (concurrent batches cannot deadlock)
            java.util.TreeMap<String, Long> byAccount = new java.util.TreeMap<>();
            for (String body : bodies) {
                int colon = body.indexOf(':');
                byAccount.merge(body.substring(0, colon), Long.parseLong(body.substring(colon + 1)), Long::sum);
            }
            jdbc.update("UPDATE accounts a SET balance = a.balance + c.amount FROM unnest(?::text[], ?::bigint[])"
                    + " AS c(id, amount) WHERE a.id = c.id", byAccount.keySet().toArray(String[]::new),
                    byAccount.values().toArray(Long[]::new));
        }
    }
}
