package dev.idemkit.archfixtures.ok.exercises;

import dev.idemkit.archfixtures.ok.ports.Store;

/** A conforming exercise: it works over a port it is handed. */
public class Check {
    private final Store store;

    public Check(Store store) {
        this.store = store;
    }

    public Store store() {
        return store;
    }
}
