package dev.idemkit.adapters.postgres;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** TEST entity: a shipment created once per order id (the upsert strategy's natural key). */
@Entity
@Table(name = "shipments")
class Shipment {
    @Id
    @Column(name = "order_id")
    private String orderId;
    private String address;

    protected Shipment() {}

    String address() {
        return address;
    }

    /** How the upsert store sees this entity's table. */
    static UpsertTable<String> table() {
        return new UpsertTable<>("shipments", "order_id", ValueColumns.text("address"));
    }
}
