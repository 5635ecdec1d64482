package dev.idemkit.app.crash;

import dev.idemkit.app.Idemkit;

/** {@code idemkit} itself (its {@code serve} for the payments API's crash test) with {@link CrashAgent}'s points armed. */
public final class ServeChild {
    private ServeChild() {}

    public static void main(String[] args) throws Exception {
        CrashAgent.install();
        Idemkit.main(args);
    }
}
