package dev.idemkit.archfixtures.ok.adapters.rabbit;

/** An adapter's settings: limits and parsers the configuration may use. */
public final class RabbitThingSettings {
    public static final int MAX = 10;

    private RabbitThingSettings() {}
}
