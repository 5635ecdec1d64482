package dev.idemkit.exercises;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Exercise 2's slow charges, as a decorator around the payments API's charge: the first charge to every third
 * account (of those whose id starts with the prefix, in the order their charges arrive) sleeps {@link #DELAY} first,
 * longer than the client's attempt timeout, so the client retries while its first request still holds the key.
 */
final class SlowCharges implements Workbench.ChargeDecorator {
    static final Duration DELAY = Duration.ofSeconds(1);

    private final String prefix;
    private final Set<String> seen = ConcurrentHashMap.newKeySet();
    private final AtomicInteger turn = new AtomicInteger();
    private final AtomicInteger slowed = new AtomicInteger();

    SlowCharges(String accountPrefix) {
        this.prefix = accountPrefix;
    }

    @Override
    public <T> T around(String accountId, Supplier<T> charge) {
        if (accountId.startsWith(prefix) && seen.add(accountId) && turn.getAndIncrement() % 3 == 0) {
            slowed.incrementAndGet();
            Waiting.pause(DELAY);
        }
        return charge.get();
    }

    int slowed() {
        return slowed.get();
    }
}
