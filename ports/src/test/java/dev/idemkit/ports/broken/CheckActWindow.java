package dev.idemkit.ports.broken;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The window between a broken store's check and its act, made wide enough that a race always shows.
 *
 * <p>A fixed pause of a fraction of a millisecond was not enough: on a loaded two-core machine the first racer
 * could check, pause and act before the scheduler ran a second one, so the contract's race saw no race and the
 * bite test failed on CI. Here a caller on another thread than the one that built the store (a racer) waits
 * after its check until a second caller has checked the same key, for at most {@link #RENDEZVOUS}: racers now
 * overlap whenever two of them start within that time. Calls on the building thread (the suites' sequential
 * tests and property histories) keep the short pause, so they stay fast.
 */
final class CheckActWindow {
    static final Duration RENDEZVOUS = Duration.ofMillis(500);

    private final Thread builder = Thread.currentThread();
    private final ConcurrentMap<Object, AtomicInteger> checked = new ConcurrentHashMap<>();

    /** Called between the check that found {@code key} absent and the act that assumes it still is. */
    void afterCheck(Object key) {
        AtomicInteger checkers = checked.computeIfAbsent(key, k -> new AtomicInteger());
        checkers.incrementAndGet();
        if (Thread.currentThread() == builder) {
            LockSupport.parkNanos(200_000);
            return;
        }
        long deadline = System.nanoTime() + RENDEZVOUS.toNanos();
        while (checkers.get() < 2 && System.nanoTime() < deadline) {
            LockSupport.parkNanos(100_000);
        }
    }
}
