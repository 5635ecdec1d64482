package dev.idemkit.exercises;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Polls a condition until it holds or a deadline passes. */
final class Waiting {
    private Waiting() {}

    /** @return whether the condition held before the deadline */
    static boolean until(Duration atMost, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + atMost.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return true;
            }
            Thread.sleep(50);
        }
        return condition.getAsBoolean();
    }

    /** Waits {@code quiet} more, so that late (duplicate) deliveries would have time to show up. */
    static void settle(Duration quiet) throws InterruptedException {
        Thread.sleep(quiet.toMillis());
    }

    /** Sleeps; an interrupt ends the sleep early and stays set. */
    static void pause(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
