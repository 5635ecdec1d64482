package dev.idemkit.exercises;

import dev.idemkit.domain.DedupId;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Exercise 3: an SQS FIFO queue with {@code MessageDeduplicationId} = SHA-256 of the canonical body.
 * Criteria: 10 identical messages give 1 delivery; a message with one field changed gives another;
 * after the 5-minute window the same message is delivered again.
 *
 * <p>On the embedded server the window is crossed by moving the server's clock (+4 min: still
 * deduplicated; +5 min 5 s: delivered); on a configured SQS endpoint the exercise waits the 5 minutes.
 */
public final class Exercise3 {
    static final Duration WINDOW = Duration.ofMinutes(5);

    static final String QUEUE = "orders.placed";

    private final Workbench bench;
    private final boolean waitForReal;

    /** @param waitForReal wait the 5 minutes even where the server's clock could be moved */
    public Exercise3(Workbench bench, boolean waitForReal) {
        this.bench = bench;
        this.waitForReal = waitForReal;
    }

    public Report run(PrintWriter out) throws InterruptedException {
        try (Workbench.Broker sqs = bench.sqs()) {
            return run(sqs, out);
        }
    }

    private Report run(Workbench.Broker sqs, PrintWriter out) throws InterruptedException {
        String run = UUID.randomUUID().toString().substring(0, 8);
        String queue = sqs.queue(QUEUE + ".ex3-" + run + ".fifo");
        List<String> received = new CopyOnWriteArrayList<>();
        byte[] order = bench.orderPlaced("ord-" + run, "cust-7", List.of("sku-1", "sku-2"));
        byte[] changed = bench.orderPlaced("ord-" + run, "cust-7", List.of("sku-1", "sku-3"));
        Report report = new Report("Exercise 3: SQS FIFO with MessageDeduplicationId = SHA-256(canonical body)");
        report.note("queue " + queue + " on " + sqs.description());
        report.note("dedup id of the order: " + DedupId.ofContent(order).value());
        try (Subscription s = sqs.transport().subscribe(queue, d -> {
            received.add(new String(d.message().body(), StandardCharsets.UTF_8));
            d.ack();
        })) {
            for (int i = 0; i < 10; i++) {
                sqs.transport().publish(queue, OutgoingMessage.of("order-" + run + "-" + i, order));
            }
            Waiting.until(Duration.ofSeconds(20), () -> received.size() >= 1);
            Waiting.settle(Duration.ofSeconds(3));
            int afterTen = received.size();
            report.check(String.format("10 identical messages -> %d delivery (expected 1)", afterTen), afterTen == 1);

            sqs.transport().publish(queue, OutgoingMessage.of("order-" + run + "-changed", changed));
            Waiting.until(Duration.ofSeconds(20), () -> received.size() >= 2);
            Waiting.settle(Duration.ofSeconds(2));
            int afterChange = received.size() - afterTen;
            report.check(String.format("message with one field changed -> %d additional delivery (expected 1)",
                    afterChange), afterChange == 1);

            java.util.Optional<Workbench.MovableClock> clock = waitForReal ? java.util.Optional.empty() : sqs.clock();
            if (clock.isPresent()) {
                clock.get().advance(Duration.ofMinutes(4));
                sqs.transport().publish(queue, OutgoingMessage.of("order-" + run + "-at-4min", order));
                Waiting.settle(Duration.ofSeconds(3));
                int at4 = received.size() - afterTen - afterChange;
                report.check(String.format("same message at +4 min (inside the window) -> %d deliveries (expected 0)",
                        at4), at4 == 0);
                clock.get().advance(Duration.ofSeconds(65));
                Waiting.settle(Duration.ofMillis(1500)); // ElasticMQ sweeps expired dedup ids once a (real) second
                report.note("the embedded server's clock was moved forward 5 min 5 s instead of waiting"
                        + " (--wait-dedup-window waits for real)");
            } else {
                out.println("   waiting " + WINDOW.plusSeconds(5).toSeconds() + " s for the deduplication window...");
                Thread.sleep(WINDOW.plusSeconds(5).toMillis());
            }
            int before = received.size();
            sqs.transport().publish(queue, OutgoingMessage.of("order-" + run + "-after-window", order));
            Waiting.until(Duration.ofSeconds(20), () -> received.size() > before);
            Waiting.settle(Duration.ofSeconds(2));
            int afterWindow = received.size() - before;
            report.check(String.format("same message after 5 min -> %d delivery (expected 1)", afterWindow),
                    afterWindow == 1);
        } finally {
            sqs.deleteQueue(queue);
        }
        return report;
    }
}
