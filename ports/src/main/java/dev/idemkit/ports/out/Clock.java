package dev.idemkit.ports.out;

import java.time.Instant;

/** The time, passed into every decision that needs it so that the domain never reads a clock. */
@FunctionalInterface
public interface Clock {
    Instant now();

    static Clock system() {
        return Instant::now;
    }
}
