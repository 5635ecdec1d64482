package dev.idemkit.archfixtures.adapters.rabbit;

/** A harmless adapter class that the violating fixtures point at. */
public class RabbitThing {}
