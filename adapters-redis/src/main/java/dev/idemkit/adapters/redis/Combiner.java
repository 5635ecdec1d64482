package dev.idemkit.adapters.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Combines the single-key steps of concurrent callers into multi-key script calls. A caller queues its request;
 * whenever fewer than {@code maxInFlight} calls are out, the queue is drained (up to {@code maxBatch} requests)
 * into one call, and each time a call answers the queue is drained again. One caller alone sends a call of one
 * key, as it would without combining; sixteen callers share a few calls per round trip, so the client pays its
 * per-command cost (futures, Netty hops, connection hand-over) and the server its per-{@code EVALSHA} cost once
 * per call instead of once per key.
 *
 * <p>Each request is still its own atomic step: the script does the keys of a call one after the other, exactly
 * as if they had come in that order from separate callers. A call that fails fails every request in it (the
 * callers see what a failed single call would show them). Thread-safe, lock-free.
 *
 * @param <T> one caller's request
 */
final class Combiner<T> {
    private record Pending<T>(T request, CompletableFuture<String> answer) {}

    private final Function<List<T>, CompletableFuture<List<String>>> send;
    private final int maxBatch;
    private final int maxInFlight;
    private final ConcurrentLinkedQueue<Pending<T>> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger inFlight = new AtomicInteger();

    /** {@code send} must answer one string per request, in order, without blocking. */
    Combiner(Function<List<T>, CompletableFuture<List<String>>> send, int maxBatch, int maxInFlight) {
        if (maxBatch < 1 || maxInFlight < 1) {
            throw new IllegalArgumentException("maxBatch and maxInFlight must be at least 1");
        }
        this.send = send;
        this.maxBatch = maxBatch;
        this.maxInFlight = maxInFlight;
    }

    /** Queues {@code request}; the future completes with its answer (or the failure of its call). */
    CompletableFuture<String> submit(T request) {
        Pending<T> pending = new Pending<>(request, new CompletableFuture<>());
        queue.add(pending);
        drain();
        return pending.answer();
    }

    private void drain() {
        while (!queue.isEmpty()) {
            int out = inFlight.get();
            if (out >= maxInFlight) {
                return; // the answer of a call that is out drains again
            }
            if (!inFlight.compareAndSet(out, out + 1)) {
                continue;
            }
            List<Pending<T>> batch = new ArrayList<>();
            Pending<T> next;
            while (batch.size() < maxBatch && (next = queue.poll()) != null) {
                batch.add(next);
            }
            if (batch.isEmpty()) {
                inFlight.decrementAndGet();
                continue;
            }
            CompletableFuture<List<String>> call;
            try {
                call = send.apply(batch.stream().map(Pending::request).toList());
            } catch (Throwable e) { // even an Error must not leak the slot or strand the batch's callers
                call = CompletableFuture.failedFuture(e);
            }
            call.whenComplete((answers, failure) -> {
                inFlight.decrementAndGet();
                try {
                    drain(); // the next call goes out before this one's callers wake up
                } finally {
                    settle(batch, answers, failure);
                }
            });
        }
    }

    private static <T> void settle(List<Pending<T>> batch, List<String> answers, Throwable failure) {
        if (failure == null && (answers == null || answers.size() != batch.size())) {
            failure = new IllegalStateException("a combined call answered " + (answers == null ? "nothing" : answers.size()
                    + " results") + " for " + batch.size() + " requests");
        }
        for (int i = 0; i < batch.size(); i++) {
            if (failure != null) {
                batch.get(i).answer().completeExceptionally(failure);
            } else {
                batch.get(i).answer().complete(answers.get(i));
            }
        }
    }
}
