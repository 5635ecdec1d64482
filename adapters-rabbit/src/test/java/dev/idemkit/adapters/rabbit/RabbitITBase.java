package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.Connection;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.Subscription;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * A transport and a raw connection per test (test classes run side by side: nothing here is static, one class's
 * clean-up cannot close another's transport); every queue a test takes is deleted after it, with its whole topology.
 */
abstract class RabbitITBase {
    RabbitMessageTransport transport;
    Connection raw;
    private final List<String> queues = new CopyOnWriteArrayList<>();
    private final List<AutoCloseable> closeables = new CopyOnWriteArrayList<>();

    @BeforeEach
    void connect() throws Exception {
        transport = new RabbitMessageTransport(RabbitFixtures.settings().withConsumers(2), Clock.system(),
                RabbitFixtures.anyConnectionName("shared"));
        raw = RabbitFixtures.rawConnection();
    }

    private void disconnect() throws IOException {
        transport.close();
        raw.close();
    }

    @AfterEach
    void cleanUp() throws Exception {
        try {
            for (AutoCloseable c : closeables) {
                c.close();
            }
            closeables.clear();
            queues.forEach(transport::deleteTopology);
            queues.clear();
        } finally {
            disconnect();
        }
    }

    String queue(String purpose) {
        String q = RabbitFixtures.anyQueue(purpose);
        queues.add(q);
        transport.declare(q);
        return q;
    }

    Subscription subscribe(RabbitMessageTransport t, String queue, DeliveryHandler handler) {
        Subscription s = t.subscribe(queue, handler);
        closeables.add(s);
        return s;
    }

    /** Closed after the test, before the queues are deleted. */
    <T extends AutoCloseable> T closeLater(T c) {
        closeables.add(c);
        return c;
    }

    long ready(String queue) throws IOException {
        return RabbitFixtures.messageCount(raw, queue);
    }
}
