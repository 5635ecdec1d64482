package dev.idemkit.spring;

import dev.idemkit.adapters.rabbit.RabbitSettings;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.springframework.amqp.rabbit.connection.AbstractConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.boot.amqp.autoconfigure.RabbitConnectionDetails;

/**
 * The broker Spring connects to, as the RabbitMQ adapter's settings: every node address, the credentials and the
 * virtual host of Boot's {@link RabbitConnectionDetails} (else of Spring's connection factory), so that idemkit's settle
 * paths are on the same broker, cluster and virtual host as the listeners, and its publishing connection recovers onto
 * whichever node answers.
 */
final class SpringRabbitUri {
    private SpringRabbitUri() {}

    /** {@code base} pointed at the nodes, credentials and virtual host of Boot's connection details. */
    static RabbitSettings of(RabbitSettings base, RabbitConnectionDetails details) {
        List<RabbitConnectionDetails.Address> addresses = details.getAddresses();
        RabbitConnectionDetails.Address first = addresses.get(0);
        String scheme = details.getSslBundle() != null ? "amqps" : "amqp";
        URI uri = uri(scheme, details.getUsername(), details.getPassword(), first.host(), first.port(),
                details.getVirtualHost());
        RabbitSettings settings = withUri(base, uri);
        return addresses.size() < 2 ? settings
                : settings.withAddresses(addresses.stream().map(a -> a.host() + ":" + a.port()).toList());
    }

    /** {@code base} pointed at Spring's connection factory's host (one node). */
    static RabbitSettings of(RabbitSettings base, ConnectionFactory factory) {
        if (!(factory instanceof AbstractConnectionFactory spring)) {
            throw new StartupRefusal("idemkit's idempotent listeners need Spring's own RabbitMQ connection"
                    + " factory (a CachingConnectionFactory) to find the broker; got " + factory.getClass().getName());
        }
        com.rabbitmq.client.ConnectionFactory rabbit = spring.getRabbitConnectionFactory();
        return withUri(base, uri(rabbit.isSSL() ? "amqps" : "amqp", rabbit.getUsername(), rabbit.getPassword(),
                spring.getHost(), spring.getPort(), spring.getVirtualHost()));
    }

    /** A broker address idemkit cannot use stops the start, naming Spring's properties; never a connection elsewhere. */
    private static RabbitSettings withUri(RabbitSettings base, URI uri) {
        try {
            return base.withUri(uri);
        } catch (IllegalArgumentException e) {
            throw new StartupRefusal("spring.rabbitmq.host / addresses: " + e.getMessage(), e);
        }
    }

    private static URI uri(String scheme, String user, String password, String host, int port, String vhost) {
        return URI.create(scheme + "://" + encode(user) + ":" + encode(password) + "@" + host + ":" + port + "/"
                + encode(vhost == null || vhost.isEmpty() ? "/" : vhost));
    }

    private static String encode(String s) {
        return URLEncoder.encode(s == null ? "" : s, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
