package dev.idemkit.spring;

import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import org.springframework.amqp.rabbit.connection.AbstractConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * The broker Spring connects to, as the RabbitMQ adapter's URI: host, port, credentials and virtual host of Spring's
 * connection factory, so that idemkit's settle paths are on the same broker and virtual host as the listeners.
 */
final class SpringRabbitUri {
    private SpringRabbitUri() {}

    static URI of(ConnectionFactory factory) {
        if (!(factory instanceof AbstractConnectionFactory spring)) {
            throw new IllegalStateException("idemkit's idempotent listeners need Spring's own RabbitMQ connection"
                    + " factory (a CachingConnectionFactory) to find the broker; got " + factory.getClass().getName());
        }
        com.rabbitmq.client.ConnectionFactory rabbit = spring.getRabbitConnectionFactory();
        String scheme = rabbit.isSSL() ? "amqps" : "amqp";
        return URI.create(scheme + "://" + encode(rabbit.getUsername()) + ":" + encode(rabbit.getPassword()) + "@"
                + spring.getHost() + ":" + spring.getPort() + "/" + encode(spring.getVirtualHost()));
    }

    private static String encode(String s) {
        return URLEncoder.encode(s == null ? "" : s, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
