package dev.idemkit.archfixtures.app.config;

import dev.idemkit.archfixtures.adapters.rabbit.RabbitThing;

/** Violates: the configuration constructs an adapter's working class (only wiring may). */
public class ConfigBuildsAnAdapter {
    Object build() {
        return new RabbitThing();
    }
}
