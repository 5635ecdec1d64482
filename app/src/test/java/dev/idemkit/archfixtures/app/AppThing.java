package dev.idemkit.archfixtures.app;

/** A harmless app class that a violating adapter fixture points at. */
public class AppThing {}
