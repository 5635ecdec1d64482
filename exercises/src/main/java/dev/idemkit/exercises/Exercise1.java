package dev.idemkit.exercises;

import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Exercise 1: a deliberately non-idempotent consumer ({@code balance = balance + amount}) receives the
 * same message 3 times and credits 3x; with the inbox (key and effect in one transaction, decided by
 * the store's unique constraint) it credits exactly 1x — also with two independent consumer instances
 * that share no memory.
 */
public final class Exercise1 {
    static final BigDecimal AMOUNT = new BigDecimal("100.00");
    static final int DELIVERIES = 3;

    static final String QUEUE = "accounts.credit";

    private final Workbench bench;

    public Exercise1(Workbench bench) {
        this.bench = bench;
    }

    public Report run(PrintWriter out) throws InterruptedException {
        String run = UUID.randomUUID().toString().substring(0, 8);
        Workbench.Broker broker = bench.broker();
        String queue = broker.queue(QUEUE + ".ex1-" + run);
        MessageTransport transport = broker.transport();
        Workbench.Credits effects = bench.credits();
        Report report = new Report("Exercise 1: non-idempotent consumer vs inbox, same message delivered "
                + DELIVERIES + " times");
        try {
            String broken = "acc-ex1-broken-" + run;
            AtomicInteger seen = new AtomicInteger();
            DeliveryHandler naive = d -> {
                effects.creditWithoutIdempotency(d.message().body());
                d.ack();
                seen.incrementAndGet();
            };
            deliverThreeTimes(transport, effects, queue, broken, "msg-" + run + "-broken", seen, naive);
            BigDecimal naiveBalance = effects.balance(broken);
            BigDecimal expectedNaive = AMOUNT.multiply(BigDecimal.valueOf(DELIVERIES));
            report.check(String.format("balance without idempotency: %s (expected %dx = %s)", naiveBalance, DELIVERIES,
                    expectedNaive), naiveBalance.compareTo(expectedNaive) == 0);

            String fixed = "acc-ex1-inbox-" + run;
            String consumer = "ex1-" + run;
            AtomicInteger settled = new AtomicInteger();
            DeliveryHandler inbox = counted(bench.creditConsumer(consumer), settled);
            deliverThreeTimes(transport, effects, queue, fixed, "msg-" + run + "-inbox", settled, inbox);
            BigDecimal inboxBalance = effects.balance(fixed);
            report.check(String.format("balance with idempotency key + processed table: %s after %d deliveries"
                    + " (expected 1x = %s)", inboxBalance, settled.get(), AMOUNT), inboxBalance.compareTo(AMOUNT) == 0
                    && settled.get() == DELIVERIES);

            // two consumer instances that share no memory: only the store can decide
            AtomicInteger twice = new AtomicInteger();
            DeliveryHandler first = counted(bench.creditConsumer(consumer), twice);
            DeliveryHandler second = counted(bench.creditConsumer(consumer), twice);
            AtomicInteger turn = new AtomicInteger();
            deliverThreeTimes(transport, effects, queue, fixed, "msg-" + run + "-inbox", twice,
                    d -> (turn.getAndIncrement() % 2 == 0 ? first : second).onDelivery(d));
            BigDecimal afterTwoInstances = effects.balance(fixed);
            String evidence = effects.dedupEvidence();
            out.println("   dedup decided by: " + evidence);
            report.check(String.format("3 more deliveries to 2 consumer instances with no shared memory: balance %s"
                    + " (expected still %s)", afterTwoInstances, AMOUNT), afterTwoInstances.compareTo(AMOUNT) == 0);
            report.check("the fix is a uniqueness constraint in the store, not an in-memory check: " + evidence,
                    evidence.contains("PRIMARY KEY") || evidence.contains("written only if absent"));
        } finally {
            broker.deleteQueue(queue);
        }
        return report;
    }

    private static DeliveryHandler counted(DeliveryHandler delegate, AtomicInteger settled) {
        return d -> {
            delegate.onDelivery(d);
            settled.incrementAndGet();
        };
    }

    private static void deliverThreeTimes(MessageTransport transport, Workbench.Credits effects, String queue,
            String account, String messageId, AtomicInteger settled, DeliveryHandler handler)
            throws InterruptedException {
        int before = settled.get();
        byte[] body = effects.message(account, AMOUNT);
        try (Subscription s = transport.subscribe(queue, handler)) {
            for (int i = 0; i < DELIVERIES; i++) {
                transport.publish(queue, OutgoingMessage.of(messageId, body));
            }
            if (!Waiting.until(Duration.ofSeconds(60), () -> settled.get() >= before + DELIVERIES)) {
                throw new IllegalStateException("only " + (settled.get() - before) + " of " + DELIVERIES
                        + " deliveries arrived within 60 s");
            }
        }
    }
}
