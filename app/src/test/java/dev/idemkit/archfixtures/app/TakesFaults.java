package dev.idemkit.archfixtures.app;

/** Violates "no production type takes a fault injector": exercises and tests decorate instead. */
public class TakesFaults {
    private final Faults faults;

    public TakesFaults(Faults faults) {
        this.faults = faults;
    }

    public void handle(String key) {
        faults.before(key);
    }
}
