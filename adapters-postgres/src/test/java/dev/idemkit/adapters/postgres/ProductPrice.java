package dev.idemkit.adapters.postgres;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** TEST entity: a product price that only a newer version replaces (the versioned strategy). */
@Entity
@Table(name = "product_prices")
class ProductPrice {
    @Id
    private String id;
    private long version;
    private long price;

    protected ProductPrice() {}

    long version() {
        return version;
    }

    long price() {
        return price;
    }

    /** How the versioned store sees this entity's table. */
    static VersionedTable<Long> table() {
        return new VersionedTable<>("product_prices", "id", "version", ValueColumns.bigint("price"));
    }
}
