package dev.idemkit.testsupport;

import java.io.PrintStream;
import java.util.concurrent.locks.LockSupport;

/**
 * The child's side of a kill test: a thread that reached the named point announces it on standard output
 * ({@code CRASH-POINT <point>}, the line the parent's {@link ChildJvm#awaitLine} waits for) and parks for good,
 * holding whatever it holds, until the parent's SIGKILL lands; every other thread goes on meanwhile, as in a real crash.
 */
public final class KillPoint {
    private static final PrintStream OUT = System.out;

    private KillPoint() {}

    /** Announces {@code point} and never returns. */
    public static void stopHere(String point) {
        synchronized (OUT) {
            OUT.println("CRASH-POINT " + point);
            OUT.flush();
        }
        while (true) {
            LockSupport.park();
        }
    }
}
