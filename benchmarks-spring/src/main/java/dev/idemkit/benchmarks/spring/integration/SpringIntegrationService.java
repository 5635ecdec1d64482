package dev.idemkit.benchmarks.spring.integration;

import dev.idemkit.benchmarks.spring.BenchQueue;
import javax.sql.DataSource;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.amqp.support.AmqpHeaders;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.integration.amqp.dsl.Amqp;
import org.springframework.integration.dsl.IntegrationFlow;
import org.springframework.integration.handler.advice.IdempotentReceiverInterceptor;
import org.springframework.integration.jdbc.metadata.JdbcMetadataStore;
import org.springframework.integration.selector.MetadataStoreSelector;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.messaging.Message;
import org.springframework.messaging.MessageChannel;
import org.springframework.messaging.MessageHandler;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * The Spring Integration peer (issue 33 item 2), set up as its reference manual recommends for an idempotent receiver
 * whose effect is in the same database: an AMQP inbound channel adapter (Spring AMQP's {@code
 * SimpleMessageListenerContainer}, acknowledged after the flow returns) into a handler advised, outermost first, by a
 * {@code TransactionHandleMessageAdvice} on the service's {@code DataSourceTransactionManager} and an {@link
 * IdempotentReceiverInterceptor} whose {@link MetadataStoreSelector} keeps the AMQP message id in a {@link
 * JdbcMetadataStore} ({@code INT_METADATA_STORE}, the module's PostgreSQL schema; on PostgreSQL its put-if-absent is an
 * {@code INSERT ... ON CONFLICT DO NOTHING}). So the id and the credit commit together before the ack; a duplicate is
 * discarded to the {@code nullChannel} and acknowledged. Failures: Spring AMQP's default, the delivery requeued.
 *
 * <p>Its container is bean {@code creditsContainer}, started by the benchmark; it runs the same container settings as
 * the other services ({@code spring.rabbitmq.listener.simple.concurrency} and {@code prefetch}, read here because a
 * container an inbound adapter owns is not built by Boot's factory).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(BenchQueue.class)
public class SpringIntegrationService {
    @Bean
    SimpleMessageListenerContainer creditsContainer(ConnectionFactory connectionFactory,
            @Value("${bench.queue}") String queue,
            @Value("${spring.rabbitmq.listener.simple.concurrency:1}") int concurrency,
            @Value("${spring.rabbitmq.listener.simple.prefetch:250}") int prefetch) {
        SimpleMessageListenerContainer container = new SimpleMessageListenerContainer(connectionFactory);
        container.setQueueNames(queue);
        container.setConcurrentConsumers(concurrency);
        container.setMaxConcurrentConsumers(concurrency);
        container.setPrefetchCount(prefetch);
        container.setAutoStartup(false);
        return container;
    }

    @Bean
    JdbcMetadataStore metadataStore(DataSource dataSource) {
        return new JdbcMetadataStore(dataSource);
    }

    @Bean
    IdempotentReceiverInterceptor idempotentReceiver(JdbcMetadataStore store, MessageChannel nullChannel) {
        IdempotentReceiverInterceptor interceptor = new IdempotentReceiverInterceptor(new MetadataStoreSelector(
                m -> (String) m.getHeaders().get(AmqpHeaders.MESSAGE_ID), store));
        interceptor.setDiscardChannel(nullChannel);
        return interceptor;
    }

    @Bean
    IntegrationFlow credits(SimpleMessageListenerContainer creditsContainer, IdempotentReceiverInterceptor idempotent,
            PlatformTransactionManager transactions, JdbcTemplate jdbc) {
        MessageHandler credit = m -> credit(jdbc, m);
        return IntegrationFlow.from(Amqp.inboundAdapter(creditsContainer).autoStartup(false))
                .handle(credit, e -> e.transactional(transactions, true).advice(idempotent))
                .get();
    }

    /** Body {@code account:amount}. */
    private static void credit(JdbcTemplate jdbc, Message<?> m) {
        Object payload = m.getPayload();
        String body = payload instanceof byte[] b ? new String(b, java.nio.charset.StandardCharsets.UTF_8)
                : payload.toString();
        int colon = body.indexOf(':');
        jdbc.update("UPDATE accounts SET balance = balance + ? WHERE id = ?",
                Long.parseLong(body.substring(colon + 1)), body.substring(0, colon));
    }
}
