package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.Connection;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.Subscription;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/** A shared transport and raw connection; every queue a test takes is deleted after it, with its whole topology. */
abstract class RabbitITBase {
    static RabbitMessageTransport transport;
    static Connection raw;
    private final List<String> queues = new CopyOnWriteArrayList<>();
    private final List<AutoCloseable> closeables = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void connect() throws Exception {
        transport = new RabbitMessageTransport(RabbitFixtures.settings().withConsumers(2), Clock.system(),
                RabbitFixtures.anyConnectionName("shared"));
        raw = RabbitFixtures.rawConnection();
    }

    @AfterAll
    static void disconnect() throws IOException {
        transport.close();
        raw.close();
    }

    @AfterEach
    void cleanUp() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
        closeables.clear();
        queues.forEach(transport::deleteTopology);
        queues.clear();
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
