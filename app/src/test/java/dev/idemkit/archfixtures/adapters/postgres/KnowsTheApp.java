package dev.idemkit.archfixtures.adapters.postgres;

import dev.idemkit.archfixtures.app.AppThing;

/** Violates "adapters do not depend on app". */
public class KnowsTheApp {
    public AppThing app() {
        return new AppThing();
    }
}
