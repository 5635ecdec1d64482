package dev.idemkit.archfixtures.adapters.postgres;

/** Violates RabbitMQ confinement: amqp-client named outside adapters-rabbit. */
public class UsesRabbitClient {
    public com.rabbitmq.client.ConnectionFactory factory() {
        return new com.rabbitmq.client.ConnectionFactory();
    }
}
