package dev.idemkit.archfixtures.adapters.postgres;

import dev.idemkit.archfixtures.adapters.rabbit.RabbitThing;

/** Violates "no adapter depends on another adapter". */
public class ReachesIntoRabbit {
    public RabbitThing borrow() {
        return new RabbitThing();
    }
}
