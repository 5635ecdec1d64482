package dev.idemkit.archfixtures.exercises;

import dev.idemkit.archfixtures.app.AppThing;

/** Violates "the exercises do not know the app" (the app hands them a workbench instead). */
public class UsesTheApp {
    public AppThing assembly() {
        return new AppThing();
    }
}
