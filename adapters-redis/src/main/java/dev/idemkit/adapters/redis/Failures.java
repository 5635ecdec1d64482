package dev.idemkit.adapters.redis;

import dev.idemkit.ports.out.StoreUnavailableException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/** Runs a Redisson call and translates whatever it throws into {@link StoreUnavailableException}. */
final class Failures {
    private Failures() {}

    /**
     * Waits for {@code future}, translating its failure. The wait is bounded (a minute, far beyond Redisson's own
     * response timeout and retries) so that a future nobody completes can never hang a consumer thread.
     */
    static <T> T await(String what, CompletableFuture<T> future) {
        return call(what, () -> {
            try {
                return future.get(1, TimeUnit.MINUTES);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for Redis", e);
            } catch (ExecutionException | CompletionException e) {
                throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
            } catch (TimeoutException e) {
                throw new IllegalStateException("no answer within a minute", e);
            }
        });
    }

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
