package dev.idemkit.archfixtures.app;

import dev.idemkit.archfixtures.benchmarks.BenchThing;

/** Violates "nothing depends on benchmarks". */
public class UsesABenchmark {
    public BenchThing bench() {
        return new BenchThing();
    }
}
