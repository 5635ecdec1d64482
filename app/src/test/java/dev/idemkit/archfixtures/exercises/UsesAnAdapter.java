package dev.idemkit.archfixtures.exercises;

import dev.idemkit.archfixtures.adapters.rabbit.RabbitThing;

/** Violates "the exercises name no adapter": they are handed what they need through ports. */
public class UsesAnAdapter {
    public RabbitThing broker() {
        return new RabbitThing();
    }
}
