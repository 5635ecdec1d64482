package dev.idemkit.exercises;

import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.deadletter.DeadLetter;
import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.FailureClassifier;
import dev.idemkit.domain.retry.Jitter;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.in.DeadLetters;
import dev.idemkit.ports.out.Alert;
import dev.idemkit.ports.out.DeadLetterEntry;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * Exercise 5: a consumer that always fails. Criteria: the message reaches the DLQ after exactly 3
 * attempts; the DLQ consumer records the origin queue, every attempt's timestamp and the failure
 * reason; an alert fires when the DLQ holds more than 10 messages (and not at 10). On RabbitMQ the
 * broker's {@code x-death} headers are shown too.
 */
public final class Exercise5 {
    static final int ATTEMPTS = 3;
    static final int THRESHOLD = 10;
    static final RetryPolicy FAST_RETRIES = new RetryPolicy(ATTEMPTS,
            Backoff.exponential(Duration.ofMillis(200), Duration.ofSeconds(1), Jitter.FULL), FailureClassifier.defaults());

    static final String QUEUE = "orders.placed";

    private final Workbench bench;

    public Exercise5(Workbench bench) {
        this.bench = bench;
    }

    public Report run(PrintWriter out) throws InterruptedException {
        String run = UUID.randomUUID().toString().substring(0, 8);
        Workbench.Broker broker = bench.broker();
        String queue = broker.queue(QUEUE + ".ex5-" + run);
        String consumer = "ex5-" + run;
        Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
        List<Alert> alerts = new CopyOnWriteArrayList<>();
        DeadLetters dlq = bench.deadLetters(consumer, alerts::add);
        Report report = new Report("Exercise 5: dead-letter queue after " + ATTEMPTS + " attempts, with alerting");
        report.note("queue " + queue + " on " + broker.description());
        DeliveryHandler failing = alwaysFailing(consumer, attempts);
        try (Subscription s = broker.transport().subscribe(queue, failing)) {
            String first = "order-" + run + "-0";
            broker.transport().publish(queue, OutgoingMessage.of(first,
                    bench.orderPlaced("ord-" + run + "-0", "cust-1", List.of("sku-1"))));
            Waiting.until(Duration.ofSeconds(60), () -> dlq.depth(queue) >= 1);
            Waiting.settle(Duration.ofSeconds(1));
            int made = attempts.getOrDefault(first, new AtomicInteger()).get();
            report.check(String.format("message in the DLQ after %d attempts (expected exactly %d), DLQ depth %d",
                    made, ATTEMPTS, dlq.depth(queue)), made == ATTEMPTS && dlq.depth(queue) == 1);

            List<DeadLetterEntry> entries = dlq.inspect(queue, 10); // logs each with origin, attempts, reason
            DeadLetter dl = entries.isEmpty() ? null : entries.get(0).deadLetter();
            if (dl != null) {
                out.println("   DLQ record: origin_queue=" + dl.originQueue() + " reason=\"" + dl.reason() + "\"");
                for (AttemptRecord a : dl.attempts()) {
                    out.println("     attempt " + a.number() + " at " + a.at() + ": " + a.error());
                }
                out.println("     dead-lettered at " + dl.deadLetteredAt());
                broker.brokerTrail(queue, entries.get(0).id()).forEach(l -> out.println("     " + l));
            }
            report.check(String.format("DLQ consumer records origin queue %s (expected %s)",
                    dl == null ? "-" : dl.originQueue(), queue), dl != null && dl.originQueue().equals(queue));
            report.check(String.format("DLQ consumer records a timestamp for each attempt: %d timestamps (expected %d)",
                    dl == null ? 0 : dl.attempts().size(), ATTEMPTS),
                    dl != null && dl.attempts().size() == ATTEMPTS
                            && dl.attempts().stream().map(AttemptRecord::at).distinct().count() == ATTEMPTS);
            report.check("DLQ consumer records the failure reason: \"" + (dl == null ? "-" : dl.reason()) + "\"",
                    dl != null && dl.reason().contains("inventory service unavailable"));

            for (int i = 1; i < THRESHOLD; i++) {
                broker.transport().publish(queue, OutgoingMessage.of("order-" + run + "-" + i,
                        bench.orderPlaced("ord-" + run + "-" + i, "cust-1", List.of("sku-1"))));
            }
            Waiting.until(Duration.ofSeconds(90), () -> dlq.depth(queue) >= THRESHOLD);
            long atTen = dlq.depth(queue);
            boolean alertAtTen = dlq.checkDepth(queue);
            report.check(String.format("DLQ holds %d: alert fired %s (expected no alert at %d)", atTen, alertAtTen,
                    THRESHOLD), atTen == THRESHOLD && !alertAtTen && alerts.isEmpty());

            broker.transport().publish(queue, OutgoingMessage.of("order-" + run + "-" + THRESHOLD,
                    bench.orderPlaced("ord-" + run + "-" + THRESHOLD, "cust-1", List.of("sku-1"))));
            Waiting.until(Duration.ofSeconds(60), () -> dlq.depth(queue) > THRESHOLD);
            long atEleven = dlq.depth(queue);
            boolean alertAtEleven = dlq.checkDepth(queue);
            alerts.forEach(a -> out.println("   ALERT: " + a.summary()));
            report.check(String.format("DLQ holds %d: alert fired %s (expected an alert above %d)", atEleven,
                    alertAtEleven, THRESHOLD), atEleven == THRESHOLD + 1 && alertAtEleven && alerts.size() == 1);
            report.note("attempts per message: " + attempts.values().stream().map(AtomicInteger::get)
                    .collect(Collectors.groupingBy(n -> n, Collectors.counting())));
        } finally {
            broker.deleteQueue(queue);
        }
        return report;
    }

    private DeliveryHandler alwaysFailing(String consumer, Map<String, AtomicInteger> attempts) {
        return bench.consumer(consumer, (message, work) -> {
            attempts.computeIfAbsent(message.rawId(), k -> new AtomicInteger()).incrementAndGet();
            throw new IllegalStateException("inventory service unavailable (simulated outage)");
        }, FAST_RETRIES);
    }
}
