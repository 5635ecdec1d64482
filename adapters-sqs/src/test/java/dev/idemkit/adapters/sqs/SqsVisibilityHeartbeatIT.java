package dev.idemkit.adapters.sqs;

import static dev.idemkit.adapters.sqs.EmbeddedSqs.bytes;
import static dev.idemkit.adapters.sqs.EmbeddedSqs.pause;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Visibility: a heartbeat keeps a slow but live handler's message hidden (no redelivery to a second
 * handler), and a retry waits in SQS for its delay rounded up to whole seconds.
 */
class SqsVisibilityHeartbeatIT {
    private static final Duration VISIBILITY = Duration.ofSeconds(2);

    private static EmbeddedSqs sqs;
    private static SqsMessageTransport transport;

    @BeforeAll
    static void startServer() {
        sqs = EmbeddedSqs.start();
        transport = new SqsMessageTransport(sqs.settings().withVisibility(VISIBILITY, Duration.ofMillis(600)));
    }

    @AfterAll
    static void stopServer() {
        transport.close();
        sqs.close();
    }

    @Test
    void aHandlerThatTakesThreeVisibilityTimeoutsIsNotRedelivered() {
        String queue = EmbeddedSqs.uniqueName("slow");
        AtomicInteger deliveries = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        try (Subscription s = transport.subscribe(queue, d -> {
            deliveries.incrementAndGet();
            pause(VISIBILITY.multipliedBy(3));
            d.ack();
            done.incrementAndGet();
        })) {
            transport.publish(queue, OutgoingMessage.of("slow-1", bytes("slow")));
            await().atMost(Duration.ofSeconds(15)).until(() -> done.get() == 1);
            pause(VISIBILITY.plusSeconds(1));
            assertThat(deliveries).as("deliveries of a message whose handler ran 3x the visibility timeout")
                    .hasValue(1);
        } finally {
            transport.deleteQueues(queue);
        }
    }

    @Test
    void aRetryWaitsInSqsForItsDelayRoundedUpToWholeSeconds() {
        String queue = EmbeddedSqs.uniqueName("delay");
        List<Long> at = new CopyOnWriteArrayList<>();
        try (Subscription s = transport.subscribe(queue, d -> {
            at.add(System.nanoTime());
            if (d.attempt() == 1) {
                d.retryAfter(Duration.ofMillis(1100), new AttemptRecord(1, Instant.now(), "IOException: later"));
            } else {
                d.ack();
            }
        })) {
            transport.publish(queue, OutgoingMessage.of("delay-1", bytes("d")));
            await().atMost(Duration.ofSeconds(15)).until(() -> at.size() >= 2);
            assertThat(Duration.ofNanos(at.get(1) - at.get(0))).as("1.1 s rounds up to 2 s of invisibility")
                    .isGreaterThanOrEqualTo(Duration.ofMillis(1900));
        } finally {
            transport.deleteQueues(queue);
        }
    }
}
