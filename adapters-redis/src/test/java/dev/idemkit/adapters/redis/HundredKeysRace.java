package dev.idemkit.adapters.redis;

import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxKey;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * 32 threads each deliver the same 100 keys of one consumer, in their own shuffled order; a delivery that finds
 * the key held by another live delivery ({@link ClaimHeldException}) is delivered again, as a broker would.
 */
final class HundredKeysRace {
    private HundredKeysRace() {}

    /** Adds one to the counter {@code work.key("count")} in the claim's slot, on the two-step or the one-call path. */
    static Outcome countInClaimSlot(RedisInboxStore store, InboxKey key, dev.idemkit.domain.Fingerprint body,
            boolean oneCall) {
        dev.idemkit.ports.out.Effect<RedisUnitOfWork, Void> addOne = work -> {
            work.incrBy(work.key("count"), 1);
            return null;
        };
        return (oneCall ? store.runOnceStaged(key, body, addOne) : store.runOnce(key, body, addOne)).outcome();
    }

    /** How many deliveries answered PROCESSED. */
    static int run(String consumer, Function<InboxKey, Outcome> deliver) throws Exception {
        AtomicInteger processed = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(32);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 32; t++) {
                done.add(pool.submit(() -> {
                    List<Integer> ids = new ArrayList<>();
                    for (int i = 0; i < 100; i++) {
                        ids.add(i);
                    }
                    Collections.shuffle(ids);
                    for (int id : ids) {
                        while (true) {
                            try {
                                if (deliver.apply(InboxKey.of(consumer, "m-" + id)) == Outcome.PROCESSED) {
                                    processed.incrementAndGet();
                                }
                                break;
                            } catch (ClaimHeldException busy) {
                                // redelivered later
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        return processed.get();
    }
}
