package dev.idemkit.app.exercises;

import dev.idemkit.app.consumers.AccountCredit;
import dev.idemkit.app.consumers.BusinessEffects;
import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.app.wiring.ConsumerKind;
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

    private final Assembly assembly;

    public Exercise1(Assembly assembly) {
        this.assembly = assembly;
    }

    public Report run(PrintWriter out) throws InterruptedException {
        String run = UUID.randomUUID().toString().substring(0, 8);
        String queue = assembly.transportBinding().queue(AccountCredit.QUEUE + ".ex1-" + run);
        MessageTransport transport = assembly.transport();
        BusinessEffects<?> effects = assembly.store().effects();
        Report report = new Report("Exercise 1: non-idempotent consumer vs inbox, same message delivered "
                + DELIVERIES + " times");
        try {
            String broken = "acc-ex1-broken-" + run;
            AtomicInteger seen = new AtomicInteger();
            DeliveryHandler naive = d -> {
                effects.creditWithoutIdempotency(AccountCredit.parse(d.message().body()));
                d.ack();
                seen.incrementAndGet();
            };
            deliverThreeTimes(transport, queue, broken, "msg-" + run + "-broken", seen, naive);
            BigDecimal naiveBalance = effects.balance(broken);
            BigDecimal expectedNaive = AMOUNT.multiply(BigDecimal.valueOf(DELIVERIES));
            report.check(String.format("balance without idempotency: %s (expected %dx = %s)", naiveBalance, DELIVERIES,
                    expectedNaive), naiveBalance.compareTo(expectedNaive) == 0);

            String fixed = "acc-ex1-inbox-" + run;
            String consumer = "ex1-" + run;
            AtomicInteger settled = new AtomicInteger();
            DeliveryHandler inbox = counted(assembly.consumer(consumer, ConsumerKind.CREDIT_ACCOUNT), settled);
            deliverThreeTimes(transport, queue, fixed, "msg-" + run + "-inbox", settled, inbox);
            BigDecimal inboxBalance = effects.balance(fixed);
            report.check(String.format("balance with idempotency key + processed table: %s after %d deliveries"
                    + " (expected 1x = %s)", inboxBalance, settled.get(), AMOUNT), inboxBalance.compareTo(AMOUNT) == 0
                    && settled.get() == DELIVERIES);

            // two consumer instances that share no memory: only the store can decide
            AtomicInteger twice = new AtomicInteger();
            DeliveryHandler first = counted(assembly.consumer(consumer, ConsumerKind.CREDIT_ACCOUNT), twice);
            DeliveryHandler second = counted(assembly.consumer(consumer, ConsumerKind.CREDIT_ACCOUNT), twice);
            AtomicInteger turn = new AtomicInteger();
            deliverThreeTimes(transport, queue, fixed, "msg-" + run + "-inbox", twice,
                    d -> (turn.getAndIncrement() % 2 == 0 ? first : second).onDelivery(d));
            BigDecimal afterTwoInstances = effects.balance(fixed);
            String evidence = effects.dedupEvidence();
            out.println("   dedup decided by: " + evidence);
            report.check(String.format("3 more deliveries to 2 consumer instances with no shared memory: balance %s"
                    + " (expected still %s)", afterTwoInstances, AMOUNT), afterTwoInstances.compareTo(AMOUNT) == 0);
            report.check("the fix is a uniqueness constraint in the store, not an in-memory check: " + evidence,
                    evidence.contains("PRIMARY KEY") || evidence.contains("written only if absent"));
        } finally {
            assembly.transportBinding().deleteQueue(queue);
        }
        return report;
    }

    private static DeliveryHandler counted(DeliveryHandler delegate, AtomicInteger settled) {
        return d -> {
            delegate.onDelivery(d);
            settled.incrementAndGet();
        };
    }

    private static void deliverThreeTimes(MessageTransport transport, String queue, String account, String messageId,
            AtomicInteger settled, DeliveryHandler handler) throws InterruptedException {
        int before = settled.get();
        byte[] body = new AccountCredit(account, AMOUNT).toJson();
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
