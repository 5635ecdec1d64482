package dev.idemkit.ports.contract;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Polls a condition until it holds or the patience runs out (no dependency on a polling library). */
public final class Eventually {
    private Eventually() {}

    /** @throws AssertionError naming {@code what} when {@code condition} did not hold within {@code patience} */
    public static void await(Duration patience, String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + patience.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("waited " + patience.toMillis() + " ms for: " + what);
            }
            pause(10);
        }
    }

    /** Sleeps, turning an interrupt into an assertion failure. */
    public static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
