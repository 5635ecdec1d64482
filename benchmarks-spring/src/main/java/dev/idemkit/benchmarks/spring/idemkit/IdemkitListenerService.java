package dev.idemkit.benchmarks.spring.idemkit;

import dev.idemkit.benchmarks.spring.BenchQueue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The service a Spring user writes with idemkit: a plain {@code @RabbitListener} that credits, made idempotent by
 * {@code idemkit.rabbit.idempotent-listeners=true} (the starter's advice: inbox key and credit in one transaction of
 * its own, acknowledged after the commit). Its container starts when the benchmark says so.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({BenchQueue.class, IdemkitListenerService.CreditListener.class})
public class IdemkitListenerService {
    /** Body {@code account:amount}; knows nothing of idemkit. */
    public static class CreditListener {
        private final JdbcTemplate jdbc;

        public CreditListener(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
        }

        @RabbitListener(id = "credits", queues = "${bench.queue}", autoStartup = "false")
        public void onCredit(String body) {
            int colon = body.indexOf(':');
            jdbc.update("UPDATE accounts SET balance = balance + ? WHERE id = ?",
                    Long.parseLong(body.substring(colon + 1)), body.substring(0, colon));
        }
    }
}
