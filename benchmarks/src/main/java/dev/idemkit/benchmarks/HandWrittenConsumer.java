package dev.idemkit.benchmarks;

import dev.idemkit.domain.Message;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.DeliveryHandler;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The second reference: what one would write by hand without idemkit, on the same transport — per
 * delivery, on a JDBC connection of the consumer's own thread, the baseline's SQL in one transaction
 * ({@link BenchDatabase#handle}), then ack. A failure propagates, so the transport requeues or rejects
 * the delivery (no retry policy: it is a baseline).
 */
final class HandWrittenConsumer implements DeliveryHandler, AutoCloseable {
    private final BenchDatabase db;
    private final String consumer;
    private final ThreadLocal<Connection> connection = new ThreadLocal<>();
    private final List<Connection> opened = new CopyOnWriteArrayList<>();

    HandWrittenConsumer(BenchDatabase db, String consumer) {
        this.db = db;
        this.consumer = consumer;
    }

    @Override
    public void onDelivery(Delivery delivery) {
        Message m = delivery.message();
        try {
            BenchDatabase.handle(connection(), consumer, m.rawId(), m.body());
        } catch (SQLException e) {
            throw new IllegalStateException("hand-written consumer failed: " + e.getMessage(), e);
        }
        delivery.ack();
    }

    private Connection connection() throws SQLException {
        Connection c = connection.get();
        if (c == null) {
            c = db.connect();
            connection.set(c);
            opened.add(c);
        }
        return c;
    }

    @Override
    public void close() throws SQLException {
        for (Connection c : opened) {
            c.close();
        }
    }
}
