package dev.idemkit.ports.out;

import java.time.Instant;
import java.util.Objects;

/** An alert: which queue, what was seen, the threshold it crossed, and when. */
public record Alert(String queue, long depth, int threshold, String summary, Instant at) {
    public Alert {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(summary, "summary");
        Objects.requireNonNull(at, "at");
    }
}
