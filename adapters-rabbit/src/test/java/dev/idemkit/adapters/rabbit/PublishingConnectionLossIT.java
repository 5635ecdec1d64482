package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.out.Clock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The broker closes the PUBLISHING connection while the consuming one stays up: a delivery whose settle must publish
 * (a retry copy, a dead letter) cannot, for as long as that connection recovers. The delivery must wait for it, not
 * go back to the queue at once: an immediate requeue is redelivered at once, fails again, and spins — on a quorum
 * queue each round counts against {@code x-delivery-limit}, so a healthy message ended in the DLQ after about a
 * second of that (found by EngineFaultsIT; before the fix this test saw the message 20+ times and then dead-lettered).
 */
class PublishingConnectionLossIT extends RabbitITBase {

    @Test
    void aRetryWhosePublishingConnectionIsRecoveringWaitsForItInsteadOfSpinning() throws Exception {
        String queue = queue("publish-loss");
        String name = RabbitFixtures.anyConnectionName("publish-loss");
        RabbitMessageTransport consumer = closeLater(new RabbitMessageTransport(RabbitFixtures.settings(),
                Clock.system(), name));
        List<Integer> attemptsSeen = new CopyOnWriteArrayList<>();
        subscribe(consumer, queue, d -> {
            attemptsSeen.add(d.attempt());
            if (d.attempt() == 1) {
                d.retryAfter(Duration.ofMillis(100), new AttemptRecord(1, Instant.now(), "fails once"));
            } else {
                d.ack();
            }
        });
        consumer.declare(queue); // the publishing connection has done its work; now take it away
        assertThat(RabbitFixtures.closeConnections(name + "-publish")).as("publishing connection closed").isEqualTo(1);
        try (Channel ch = raw.createChannel()) {
            ch.basicPublish("", queue, new AMQP.BasicProperties.Builder().messageId("m-1").deliveryMode(2).build(),
                    "body".getBytes(StandardCharsets.UTF_8));
        }

        awaitRetriedAndDrained(queue, attemptsSeen);
        assertThat(attemptsSeen).as("first attempt seen once or twice (not spinning), then the retry")
                .containsSubsequence(1, 2).hasSizeLessThanOrEqualTo(3);
        assertThat(transport.deadLetterQueue().depth(queue)).isZero();
    }

    /**
     * The batched consumer hands a failed batch's deliveries to the single path and swallows what that throws: a
     * retry whose publish failed for its whole patience must still come back (the delivery gives itself back after a
     * pause) instead of staying unacked on a healthy channel forever (before: it never came back).
     */
    @Test
    void aRetryThatFailedForItsWholePatienceComesBackEvenWhenTheCallerSwallowsTheFailure() throws Exception {
        Duration before = RabbitDelivery.settlePatience;
        RabbitDelivery.settlePatience = Duration.ofMillis(200); // shorter than the publishing connection's recovery
        try {
            String queue = queue("publish-loss-swallowed");
            String name = RabbitFixtures.anyConnectionName("publish-loss-swallowed");
            RabbitMessageTransport consumer = closeLater(new RabbitMessageTransport(RabbitFixtures.settings(),
                    Clock.system(), name));
            List<Integer> attemptsSeen = new CopyOnWriteArrayList<>();
            List<String> swallowed = new CopyOnWriteArrayList<>();
            subscribe(consumer, queue, d -> {
                attemptsSeen.add(d.attempt());
                if (d.attempt() == 1) {
                    try {
                        d.retryAfter(Duration.ofMillis(100), new AttemptRecord(1, Instant.now(), "fails once"));
                    } catch (dev.idemkit.ports.out.TransportException e) {
                        swallowed.add(e.getMessage()); // as BatchingConsumer's hand-over does
                    }
                } else {
                    d.ack();
                }
            });
            consumer.declare(queue);
            assertThat(RabbitFixtures.closeConnections(name + "-publish")).isEqualTo(1);
            try (Channel ch = raw.createChannel()) {
                ch.basicPublish("", queue, new AMQP.BasicProperties.Builder().messageId("m-1").deliveryMode(2).build(),
                        "body".getBytes(StandardCharsets.UTF_8));
            }

            awaitRetriedAndDrained(queue, attemptsSeen);
            assertThat(swallowed).as("the first retry failed for its whole patience").isNotEmpty();
            assertThat(attemptsSeen.size()).as("given back after a pause, not spinning").isLessThanOrEqualTo(6);
            assertThat(transport.deadLetterQueue().depth(queue)).isZero();
        } finally {
            RabbitDelivery.settlePatience = before;
        }
    }

    /** Until the second attempt was seen and the queue holds nothing. */
    private void awaitRetriedAndDrained(String queue, List<Integer> attemptsSeen) {
        Eventually.await(Duration.ofSeconds(30), "the retried delivery, acked", () -> {
            try {
                return attemptsSeen.contains(2) && ready(queue) == 0;
            } catch (java.io.IOException e) {
                return false;
            }
        });
    }
}
