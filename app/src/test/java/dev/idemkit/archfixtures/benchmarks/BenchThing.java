package dev.idemkit.archfixtures.benchmarks;

/** A benchmark class that a violating app fixture points at. */
public class BenchThing {}
