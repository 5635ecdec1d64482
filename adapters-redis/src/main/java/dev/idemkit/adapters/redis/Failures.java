package dev.idemkit.adapters.redis;

import dev.idemkit.ports.out.StoreUnavailableException;
import java.util.function.Supplier;

/** Runs a Redisson call and translates whatever it throws into {@link StoreUnavailableException}. */
final class Failures {
    private Failures() {}

    static <T> T call(String what, Supplier<T> call) {
        try {
            return call.get();
        } catch (StoreUnavailableException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new StoreUnavailableException("Redis failed to " + what + ": " + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : ": " + e.getMessage()), e);
        }
    }
}
