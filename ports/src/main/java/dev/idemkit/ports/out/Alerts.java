package dev.idemkit.ports.out;

/** Where alerts go (a pager, a log, a metric). Must not throw for delivery problems of its own. */
@FunctionalInterface
public interface Alerts {
    void raise(Alert alert);
}
