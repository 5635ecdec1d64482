package dev.idemkit.benchmarks;

import dev.idemkit.app.consumers.AccountCredit;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutgoingMessage;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;

/**
 * The {@code accounts.credit} messages of one case, in publishing order: each credits 1.00 to a random
 * one of {@code accounts} accounts, and a share of them repeat an earlier message exactly (same id, same
 * body), as a redelivery or a producer retry would.
 *
 * @param unique distinct message ids, i.e. the credits a correct consumer applies
 */
record Workload(String label, String queue, List<OutgoingMessage> messages, long unique) {
    static final BigDecimal AMOUNT = new BigDecimal("1.00");

    static Workload credits(String label, String queue, String idPrefix, int count, double duplicates, int accounts,
            long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        return generate(label, queue, idPrefix, count, duplicates, random, fresh -> account(random.nextInt(accounts)));
    }

    /**
     * As {@link #credits}, but each distinct message credits an account of its own, {@code accountPrefix + n} for the
     * n-th distinct message: the balances then say exactly which message was lost (0) or applied twice (above 1.00),
     * where sums over shared accounts could let one cancel the other (the kill comparisons).
     */
    static Workload perMessage(String label, String queue, String idPrefix, int count, double duplicates,
            String accountPrefix, long seed) {
        return generate(label, queue, idPrefix, count, duplicates, new SplittableRandom(seed),
                fresh -> accountPrefix + fresh);
    }

    private static Workload generate(String label, String queue, String idPrefix, int count, double duplicates,
            SplittableRandom random, IntFunction<String> accountOf) {
        List<OutgoingMessage> sent = new ArrayList<>(count);
        int fresh = 0;
        for (int i = 0; i < count; i++) {
            if (!sent.isEmpty() && random.nextDouble() < duplicates) {
                sent.add(sent.get(random.nextInt(sent.size())));
                continue;
            }
            String account = accountOf.apply(fresh);
            sent.add(OutgoingMessage.of(idPrefix + "-" + fresh++, new AccountCredit(account, AMOUNT).toJson()));
        }
        return new Workload(label, queue, List.copyOf(sent), fresh);
    }

    static String account(int i) {
        return "bench-acc-" + i;
    }

    int size() {
        return messages.size();
    }

    long duplicates() {
        return messages.size() - unique;
    }

    /** What a correct consumer adds to the sum of all balances. */
    BigDecimal expectedCredit() {
        return AMOUNT.multiply(BigDecimal.valueOf(unique));
    }

    /**
     * Publishes every message of every workload with confirms, from {@code threads} threads spread over
     * {@code transports} (each confirms on its own channels); returns when all are confirmed.
     */
    static void publishAll(List<Workload> workloads, List<? extends MessageTransport> transports, int threads)
            throws InterruptedException {
        List<Workload> owner = new ArrayList<>();
        List<OutgoingMessage> all = new ArrayList<>();
        for (Workload w : workloads) {
            for (OutgoingMessage m : w.messages()) {
                owner.add(w);
                all.add(m);
            }
        }
        AtomicInteger next = new AtomicInteger();
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        List<Thread> publishers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            MessageTransport transport = transports.get(t % transports.size());
            Thread p = new Thread(() -> {
                try {
                    for (int i = next.getAndIncrement(); i < all.size() && failure.get() == null;
                            i = next.getAndIncrement()) {
                        transport.publish(owner.get(i).queue(), all.get(i));
                    }
                } catch (RuntimeException e) {
                    failure.compareAndSet(null, e);
                }
            }, "idemkit-bench-publish-" + t);
            p.start();
            publishers.add(p);
        }
        for (Thread p : publishers) {
            p.join();
        }
        if (failure.get() != null) {
            throw failure.get();
        }
    }
}
