package dev.idemkit.ports.contract;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Runs one action on many threads released together by a barrier: the shape of a same-key race. */
public final class Race {

    /** One racer's work; {@code index} tells the racers apart. */
    @FunctionalInterface
    public interface Racer<T> {
        T run(int index) throws Exception;
    }

    private Race() {}

    /**
     * @return each racer's result, in racer order
     * @throws AssertionError when a racer threw or the race took more than a minute
     */
    public static <T> List<T> run(int threads, Racer<T> racer) {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CyclicBarrier start = new CyclicBarrier(threads);
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                int index = i;
                futures.add(pool.submit(() -> {
                    start.await(30, TimeUnit.SECONDS);
                    return racer.run(index);
                }));
            }
            List<T> results = new ArrayList<>();
            for (Future<T> f : futures) {
                results.add(f.get(60, TimeUnit.SECONDS));
            }
            return results;
        } catch (ExecutionException e) {
            throw new AssertionError("a racing thread failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted during a race", e);
        } catch (TimeoutException e) {
            throw new AssertionError("a race did not finish within 60 s", e);
        } finally {
            pool.shutdownNow();
        }
    }
}
