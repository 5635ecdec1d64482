package dev.idemkit.ports.contract;

/** The failure a contract test's effect throws on purpose, after it wrote through its unit of work. */
public final class SimulatedFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public SimulatedFailure() {
        super("simulated effect failure");
    }
}
