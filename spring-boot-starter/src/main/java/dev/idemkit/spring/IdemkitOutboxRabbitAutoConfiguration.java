package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.PostgresOutbox;
import dev.idemkit.adapters.rabbit.RabbitProducer;
import dev.idemkit.adapters.rabbit.RabbitSettings;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.MessageTransport;
import javax.sql.DataSource;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * The outbox relay's transport when the service has RabbitMQ (spring-rabbit, Boot's AMQP support and
 * idemkit-adapters-rabbit) and no {@link MessageTransport} of its own: adapters-rabbit's {@link RabbitProducer} on the
 * nodes, credentials and virtual host Spring connects to, with a connection of its own ({@code idemkit-spring-outbox}).
 * It declares nothing: each destination is a queue its consumer declared; a row for a queue that does not exist is
 * retried, then parked with the broker's reason. Made only where the outbox is (a data source and adapters-postgres).
 * It connects at start-up, as the idempotent listeners' settle connection does: a broker that cannot be reached stops
 * the start with the reason.
 */
@AutoConfiguration(afterName = {"org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration"})
@ConditionalOnProperty(prefix = "idemkit", name = "enabled", matchIfMissing = true)
@ConditionalOnProperty(prefix = "idemkit.outbox", name = "enabled", havingValue = "true")
@ConditionalOnClass(value = {RabbitProducer.class, ConnectionFactory.class, PostgresOutbox.class},
        name = "org.springframework.boot.amqp.autoconfigure.RabbitConnectionDetails")
@ConditionalOnBean(DataSource.class)
public class IdemkitOutboxRabbitAutoConfiguration {

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(MessageTransport.class)
    MessageTransport idemkitOutboxTransport(ObjectProvider<ConnectionFactory> connectionFactory,
            ObjectProvider<org.springframework.boot.amqp.autoconfigure.RabbitConnectionDetails> details) {
        var connection = details.getIfAvailable();
        ConnectionFactory factory = connectionFactory.getIfAvailable();
        if (connection == null && factory == null) {
            throw new StartupRefusal("idemkit.outbox.enabled=true found no RabbitMQ connection settings: configure"
                    + " spring.rabbitmq.* (or define a bean of type " + MessageTransport.class.getName() + ")");
        }
        RabbitSettings settings = connection != null ? SpringRabbitUri.of(RabbitSettings.defaults(), connection)
                : SpringRabbitUri.of(RabbitSettings.defaults(), factory);
        return new RabbitProducer(settings, Clock.system(), "idemkit-spring-outbox");
    }
}
