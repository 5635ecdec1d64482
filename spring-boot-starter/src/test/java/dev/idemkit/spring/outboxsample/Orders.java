package dev.idemkit.spring.outboxsample;

import dev.idemkit.spring.IdemkitOutbox;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class Orders {
    private final JdbcTemplate jdbc;
    private final IdemkitOutbox outbox;

    public Orders(JdbcTemplate jdbc, IdemkitOutbox outbox) {
        this.jdbc = jdbc;
        this.outbox = outbox;
    }

    // The order and its event commit together or not at all: the append is a row in this
    // transaction, published by the starter's relay once it committed (idemkit.outbox.*).
    @Transactional
    public void place(String orderId, long total) {
        jdbc.update("INSERT INTO orders (id, total) VALUES (?, ?)", orderId, total);
        outbox.append("order-placed", "order-" + orderId, "placed:" + orderId);
    }

    // Events of one ordering key are published in the order their transactions committed.
    @Transactional
    public void pay(String orderId) {
        jdbc.update("UPDATE orders SET paid = true WHERE id = ?", orderId);
        outbox.append("order-paid", "order-" + orderId, "paid:" + orderId);
    }

    /** A method that fails after its append: nothing of it commits, the event neither. */
    @Transactional
    public void placeThenFail(String orderId, long total) {
        place(orderId, total);
        throw new IllegalStateException("failed after the append");
    }
}
