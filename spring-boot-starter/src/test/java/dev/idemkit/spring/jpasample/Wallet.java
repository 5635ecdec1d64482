package dev.idemkit.spring.jpasample;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** The JPA sample's entity: a wallet whose balance is credited (a non-idempotent change). */
@Entity
@Table(name = "wallets")
public class Wallet {
    @Id
    private String id;
    private long balance;

    protected Wallet() {}

    public Wallet(String id) {
        this.id = id;
    }

    public void credit(long amount) {
        balance += amount;
    }

    public long balance() {
        return balance;
    }
}
