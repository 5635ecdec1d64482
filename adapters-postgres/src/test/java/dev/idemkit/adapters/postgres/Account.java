package dev.idemkit.adapters.postgres;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** TEST entity from the seed: an account whose balance is credited (a non-idempotent increment). */
@Entity
@Table(name = "accounts")
class Account {
    @Id
    private String id;
    private long balance;

    protected Account() {}

    Account(String id, long balance) {
        this.id = id;
        this.balance = balance;
    }

    String id() {
        return id;
    }

    void credit(long amount) {
        balance += amount;
    }

    long balance() {
        return balance;
    }
}
