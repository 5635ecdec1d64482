package dev.idemkit.archfixtures.ports;

import dev.idemkit.archfixtures.adapters.rabbit.RabbitThing;

/** Violates "adapter classes are named only in their module and app" (and the layers). */
public class NamesAnAdapter {
    public RabbitThing thing() {
        return new RabbitThing();
    }
}
