package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.Address;
import com.rabbitmq.client.AddressResolver;
import com.rabbitmq.client.ConnectionFactory;
import java.util.List;

/** How idemkit connects to RabbitMQ: the factory's recovery, heartbeat and timeouts, and the node order. */
final class RabbitConnections {
    /** The bound of one synchronous call to the broker: well under heartbeat detection, well over a slow declare. */
    static final java.time.Duration RPC_TIMEOUT = java.time.Duration.ofSeconds(10);

    private RabbitConnections() {}

    /**
     * A publishing connection named {@code name}: automatic recovery of the connection and its channels, none of the
     * topology (declarations are idemkit's own, on short-lived channels).
     *
     * @throws dev.idemkit.ports.out.TransportException when the broker cannot be reached
     */
    static com.rabbitmq.client.Connection publishing(RabbitSettings settings, String name) {
        try {
            return factory(settings, false).newConnection(null, nodes(settings), name);
        } catch (java.io.IOException | java.util.concurrent.TimeoutException e) {
            throw new dev.idemkit.ports.out.TransportException("cannot connect to " + settings.redactedUri()
                    + (settings.addresses().isEmpty() ? "" : " at " + settings.addresses()) + ": " + e.getMessage(), e);
        }
    }

    static ConnectionFactory factory(RabbitSettings settings, boolean recoverTopology) {
        ConnectionFactory f = new ConnectionFactory();
        try {
            f.setUri(settings.uri());
        } catch (java.security.GeneralSecurityException | RuntimeException e) {
            throw new IllegalArgumentException("rabbit uri is not usable: " + settings.redactedUri(), e);
        }
        f.setAutomaticRecoveryEnabled(true);
        f.setTopologyRecoveryEnabled(recoverTopology);
        f.setNetworkRecoveryInterval(1_000);
        f.setRequestedHeartbeat(15);
        f.setConnectionTimeout(5_000);
        // every synchronous call (channel open, declare, qos, consume, close) gives up after this instead of waiting
        // for heartbeat detection (two missed 15 s heartbeats) on a socket that died silently
        f.setChannelRpcTimeout((int) RPC_TIMEOUT.toMillis());
        return f;
    }

    /**
     * The uri's host and port, or the settings' node addresses, tried IN THE ORDER GIVEN on connect and on every
     * recovery (amqp-client would shuffle them; Spring AMQP's default does not either). A deployment spreads its
     * connections by giving each instance its own order. The leader of a quorum queue is placed on the node of the
     * connection that declares it.
     */
    static AddressResolver nodes(RabbitSettings settings) {
        List<Address> addresses = settings.addresses().isEmpty()
                ? List.of(new Address(settings.uri().getHost() == null ? ConnectionFactory.DEFAULT_HOST
                        : settings.uri().getHost(), settings.uri().getPort() > 0 ? settings.uri().getPort()
                        : "amqps".equals(settings.uri().getScheme()) ? ConnectionFactory.DEFAULT_AMQP_OVER_SSL_PORT
                        : ConnectionFactory.DEFAULT_AMQP_PORT))
                : settings.addresses().stream().map(Address::parseAddress).toList();
        return new AddressResolver() {
            @Override
            public List<Address> getAddresses() {
                return addresses;
            }

            @Override
            public List<Address> maybeShuffle(List<Address> input) {
                return input;
            }
        };
    }
}
