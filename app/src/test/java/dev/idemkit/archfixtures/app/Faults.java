package dev.idemkit.archfixtures.app;

/** A fault injector, as production once took one. */
public interface Faults {
    void before(String key);
}
