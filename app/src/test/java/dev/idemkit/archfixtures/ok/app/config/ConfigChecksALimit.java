package dev.idemkit.archfixtures.ok.app.config;

import dev.idemkit.archfixtures.ok.adapters.rabbit.RabbitThingSettings;

/** Conforms: the configuration refuses a bad value with an adapter's own limit, and builds nothing. */
public class ConfigChecksALimit {
    boolean valid(int n) {
        return n <= RabbitThingSettings.MAX;
    }
}
