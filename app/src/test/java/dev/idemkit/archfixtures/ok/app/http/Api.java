package dev.idemkit.archfixtures.ok.app.http;

import dev.idemkit.archfixtures.ok.ports.Store;

/** A conforming example-service class: it works over a port. */
public class Api {
    private final Store store;

    public Api(Store store) {
        this.store = store;
    }

    public Store store() {
        return store;
    }
}
