package dev.idemkit.archfixtures.app.http;

import dev.idemkit.archfixtures.adapters.rabbit.RabbitThing;

/** Violates "the example service names no adapter": only the app's wiring does. */
public class ApiNamesAnAdapter {
    public RabbitThing store() {
        return new RabbitThing();
    }
}
