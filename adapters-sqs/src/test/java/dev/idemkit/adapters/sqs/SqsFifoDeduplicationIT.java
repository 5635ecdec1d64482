package dev.idemkit.adapters.sqs;

import static dev.idemkit.adapters.sqs.EmbeddedSqs.bytes;
import static dev.idemkit.adapters.sqs.EmbeddedSqs.pause;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The seed's exercise 3 on a FIFO queue: the deduplication id is the hex SHA-256 of the canonical body,
 * so identical messages inside SQS's 5-minute window reach the consumer once. ElasticMQ's window is
 * fixed at 5 minutes; its clock (the queue-manager actor's {@code NowProvider}) is replaced by one the
 * test moves forward, so the window's expiry is tested without waiting: still deduplicated at +4 min,
 * delivered again at +5 min 5 s.
 */
class SqsFifoDeduplicationIT {
    private static final String ORDER = "{\"order\":\"o-1001\",\"customer\":\"c-7\",\"amount\":\"129.90\",\"currency\":\"BRL\"}";

    private static EmbeddedSqs sqs;
    private static SqsMessageTransport transport;

    private String queue;
    private Subscription subscription;
    private final List<String> received = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void startServer() {
        sqs = EmbeddedSqs.withShiftableClock();
        transport = new SqsMessageTransport(sqs.settings());
    }

    @AfterAll
    static void stopServer() {
        transport.close();
        sqs.close();
    }

    @BeforeEach
    void subscribeToAFreshFifoQueue() {
        queue = EmbeddedSqs.uniqueName("orders") + ".fifo";
        subscription = transport.subscribe(queue, d -> {
            received.add(new String(d.message().body(), StandardCharsets.UTF_8));
            d.ack();
        });
    }

    @AfterEach
    void deleteQueue() {
        subscription.close();
        transport.deleteQueues(queue);
    }

    @Test
    void tenIdenticalMessagesPublishedToAFifoQueueAreReceivedOnce() {
        for (int i = 0; i < 10; i++) {
            transport.publish(queue, OutgoingMessage.of("order-1001", bytes(ORDER)));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> received.size() >= 1);
        quietFor(Duration.ofSeconds(2));
        assertThat(received).containsExactly(ORDER);
    }

    @Test
    void theSameJsonWithOtherKeyOrderAndSpacingIsTheSameMessage() {
        transport.publish(queue, OutgoingMessage.of("order-1001", bytes(ORDER)));
        // another message id too: the dedup id is the content's alone, the id is not hashed into it
        transport.publish(queue, OutgoingMessage.of("order-1001-resent", bytes(
                "{ \"currency\": \"BRL\", \"amount\": \"129.90\",\n \"customer\": \"c-7\", \"order\": \"o-1001\" }")));
        await().atMost(Duration.ofSeconds(10)).until(() -> received.size() >= 1);
        quietFor(Duration.ofSeconds(2));
        assertThat(received).hasSize(1);
    }

    @Test
    void aMessageWithOneFieldChangedIsReceived() {
        String changed = ORDER.replace("129.90", "130.00");
        transport.publish(queue, OutgoingMessage.of("order-1001", bytes(ORDER)));
        transport.publish(queue, OutgoingMessage.of("order-1001", bytes(changed)));
        await().atMost(Duration.ofSeconds(10)).until(() -> received.size() >= 2);
        assertThat(received).containsExactly(ORDER, changed);
    }

    @Test
    void theCallersDeduplicationIdWinsOverTheContent() {
        OutgoingMessage first = new OutgoingMessage("m-1", bytes("one"), Map.of(), Optional.empty(), Optional.of("d-1"));
        OutgoingMessage second = new OutgoingMessage("m-2", bytes("two"), Map.of(), Optional.empty(), Optional.of("d-1"));
        transport.publish(queue, first);
        transport.publish(queue, second);
        await().atMost(Duration.ofSeconds(10)).until(() -> received.size() >= 1);
        quietFor(Duration.ofSeconds(2));
        assertThat(received).containsExactly("one");
    }

    @Test
    void afterTheFiveMinuteWindowTheSameMessageIsDeliveredAgain() {
        transport.publish(queue, OutgoingMessage.of("order-1001", bytes(ORDER)));
        await().atMost(Duration.ofSeconds(10)).until(() -> received.size() >= 1);

        sqs.clock().advance(Duration.ofMinutes(4));
        transport.publish(queue, OutgoingMessage.of("order-1001", bytes(ORDER)));
        quietFor(Duration.ofSeconds(2));
        assertThat(received).as("at +4 min, inside the window").hasSize(1);

        sqs.clock().advance(Duration.ofSeconds(65));
        // ElasticMQ sweeps expired deduplication ids once a second (real time): let one sweep run
        pause(Duration.ofMillis(1500));
        transport.publish(queue, OutgoingMessage.of("order-1001", bytes(ORDER)));
        await().atMost(Duration.ofSeconds(10)).until(() -> received.size() >= 2);
        assertThat(received).as("at +5 min 5 s, past the window").containsExactly(ORDER, ORDER);
    }

    private void quietFor(Duration d) {
        int before = received.size();
        pause(d);
        assertThat(received).as("nothing more arrived within " + d).hasSize(before);
    }
}
