package dev.idemkit.adapters.postgres;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/** TEST entity from the seed: stock reserved for an order, one row per order id. */
@Entity
@Table(name = "inventory_reservations")
class InventoryReservation {
    @Id
    @Column(name = "order_id")
    private String orderId;
    private int items;
    @Column(name = "reserved_at")
    private Instant reservedAt;

    protected InventoryReservation() {}

    InventoryReservation(String orderId, int items, Instant reservedAt) {
        this.orderId = orderId;
        this.items = items;
        this.reservedAt = reservedAt;
    }

    String orderId() {
        return orderId;
    }

    int items() {
        return items;
    }
}
