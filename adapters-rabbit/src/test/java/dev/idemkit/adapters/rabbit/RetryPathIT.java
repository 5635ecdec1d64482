package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.Channel;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.Jitter;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.TransportException;
import dev.idemkit.ports.service.ConsumerSettings;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The retry path: broker-held, never blocking a consumer thread, and no head-of-line blocking across delays. */
class RetryPathIT extends RabbitITBase {
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @Test
    void whileAWaitsForItsRetryBThroughZAreProcessedByTheOnlyConsumer() {
        String queue = queue("a-to-z");
        RabbitMessageTransport single = closeLater(new RabbitMessageTransport(RabbitFixtures.settings().withConsumers(1)
                .withPrefetch(1), Clock.system(), RabbitFixtures.anyConnectionName("single")));
        Map<String, Long> processedAt = new ConcurrentHashMap<>();
        AtomicLong aFailedAt = new AtomicLong();
        RetryPolicy twoSeconds = RetryPolicy.defaults().withBackoff(
                Backoff.exponential(Duration.ofSeconds(2), Duration.ofSeconds(2), Jitter.NONE));
        Consumers consumers = new Consumers();
        subscribe(single, queue, consumers.runtime(ConsumerSettings.defaults("a-to-z").withRetryPolicy(twoSeconds),
                (message, work) -> {
                    if (message.rawId().equals("A") && aFailedAt.compareAndSet(0, System.nanoTime())) {
                        throw new IllegalStateException("downstream busy");
                    }
                    processedAt.put(message.rawId(), System.nanoTime());
                }));
        single.publish(queue, OutgoingMessage.of("A", bytes("A")));
        Eventually.await(PATIENCE, "A's failure", () -> aFailedAt.get() != 0);
        for (char c = 'B'; c <= 'Z'; c++) {
            single.publish(queue, OutgoingMessage.of(String.valueOf(c), bytes(String.valueOf(c))));
        }
        Eventually.await(PATIENCE, "A..Z", () -> processedAt.size() == 26);

        long aDone = processedAt.remove("A");
        assertThat(processedAt.values()).as("B..Z processed before A's retry").allSatisfy(t -> assertThat(t).isLessThan(aDone));
        assertThat(Duration.ofNanos(aDone - aFailedAt.get())).isGreaterThanOrEqualTo(Duration.ofMillis(1900));
    }

    @Test
    void aShortRetryIsNotHeldBehindALongerOne() {
        String queue = queue("hol");
        List<String> secondAttempts = new CopyOnWriteArrayList<>();
        AtomicLong shortRetriedAt = new AtomicLong();
        AtomicLong shortBackAt = new AtomicLong();
        subscribe(transport, queue, d -> {
            String id = d.message().rawId();
            if (d.attempt() > 1) {
                secondAttempts.add(id);
                if (id.equals("short")) {
                    shortBackAt.set(System.nanoTime());
                }
                d.ack();
            } else if (id.equals("long")) {
                d.retryAfter(Duration.ofSeconds(20), failed(d));
            } else {
                shortRetriedAt.set(System.nanoTime());
                d.retryAfter(Duration.ofMillis(300), failed(d));
            }
        });
        transport.publish(queue, OutgoingMessage.of("long", bytes("l")));
        Eventually.await(PATIENCE, "the long retry", () -> {
            try {
                return ready(RabbitTopology.retryQueue(queue, 32)) == 1;
            } catch (Exception e) {
                return false;
            }
        });
        transport.publish(queue, OutgoingMessage.of("short", bytes("s")));
        Eventually.await(PATIENCE, "the short retry", () -> shortBackAt.get() != 0);
        assertThat(secondAttempts).containsExactly("short");
        // held behind the long one it would come back after 20 s; its own bucket is 1 s (a loaded machine: up to 10)
        assertThat(Duration.ofNanos(shortBackAt.get() - shortRetriedAt.get())).isLessThan(Duration.ofSeconds(10));
    }

    @Test
    void aMessageWaitingForItsRetrySurvivesTheConsumersCrash() {
        String queue = queue("crash-while-waiting");
        RabbitMessageTransport doomed = new RabbitMessageTransport(RabbitFixtures.settings(), Clock.system(),
                RabbitFixtures.anyConnectionName("doomed"));
        AtomicLong retried = new AtomicLong();
        doomed.subscribe(queue, d -> {
            d.retryAfter(Duration.ofSeconds(2), failed(d));
            retried.set(System.nanoTime());
        });
        doomed.publish(queue, OutgoingMessage.of("m-1", bytes("survives")));
        Eventually.await(PATIENCE, "the retry", () -> retried.get() != 0);
        doomed.abort();

        List<Delivery> seen = new CopyOnWriteArrayList<>();
        subscribe(transport, queue, d -> {
            seen.add(d);
            d.ack();
        });
        Eventually.await(PATIENCE, "the retried message, at a new consumer", () -> !seen.isEmpty());
        assertThat(seen.get(0).message().rawId()).isEqualTo("m-1");
        assertThat(seen.get(0).attempt()).isEqualTo(2);
        assertThat(seen.get(0).history()).extracting(AttemptRecord::error).containsExactly("IllegalStateException: try");
    }

    @Test
    void aPublishThatNoQueueTakesFailsInsteadOfVanishing() throws Exception {
        String queue = queue("vanished");
        try (Channel ch = raw.createChannel()) {
            ch.queueDelete(queue);
        }
        assertThatThrownBy(() -> transport.publish(queue, OutgoingMessage.of("lost?", bytes("x"))))
                .isInstanceOf(TransportException.class).hasMessageContaining("unroutable");
    }

    private static AttemptRecord failed(Delivery d) {
        return new AttemptRecord(d.attempt(), Instant.now(), "IllegalStateException: try");
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
