package dev.idemkit.ports.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.ConsumerName;
import dev.idemkit.domain.Message;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.deadletter.DeadLetter;
import dev.idemkit.domain.inbox.Inbox;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.Jitter;
import dev.idemkit.domain.retry.NonRetryableException;
import dev.idemkit.domain.retry.RandomSource;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.contract.ContractGenerators;
import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.memory.InMemoryCounter;
import dev.idemkit.ports.memory.InMemoryInboxStore;
import dev.idemkit.ports.memory.InMemoryMessageTransport;
import dev.idemkit.ports.memory.InMemoryUnitOfWork;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents.Decision;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.service.RecordingDelivery.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ConsumerRuntimeTest {
    private static final Duration PATIENCE = Duration.ofSeconds(10);
    private static final String CONSUMER = "billing";

    private final InMemoryMessageTransport transport = new InMemoryMessageTransport();
    private final InMemoryInboxStore inbox = new InMemoryInboxStore();
    private final InMemoryCounter counter = new InMemoryCounter();
    private final List<Decision> decisions = new CopyOnWriteArrayList<>();
    /** Consumer names the events reported, asserted on the test thread (a transport worker would swallow a failure). */
    private final List<ConsumerName> reportedBy = new CopyOnWriteArrayList<>();
    private final AtomicInteger handled = new AtomicInteger();
    private final String queue = ContractGenerators.fresh("orders");
    /** Three attempts, 100 ms then 200 ms between them, no jitter. */
    private final ConsumerSettings settings = ConsumerSettings.defaults(CONSUMER).withRetryPolicy(RetryPolicy.defaults()
            .withBackoff(Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(1), Jitter.NONE)));

    @AfterEach
    void closeTransport() {
        transport.close();
        // allSatisfy, not containsOnly: a test may end before a worker has reported its last event
        assertThat(reportedBy).as("every event names this test's consumer")
                .allSatisfy(c -> assertThat(c).isEqualTo(ConsumerName.of(CONSUMER)));
    }

    @Test
    void processedMessageRunsTheEffectAndIsAcknowledged() {
        RecordingDelivery d = delivery("m-1", "amount=5", 1);
        adding(5).onDelivery(d);
        assertThat(d.settlement).isEqualTo(Settlement.ACK);
        assertThat(counter.read("total")).isEqualTo(5);
        assertThat(decisions).containsExactly(Decision.PROCESSED);
        assertThat(inbox.recorded(InboxKey.of(CONSUMER, "m-1"))).isPresent();
    }

    @Test
    void duplicateIsAcknowledgedWithoutRunningTheEffect() {
        ConsumerRuntime<InMemoryUnitOfWork> runtime = adding(5);
        runtime.onDelivery(delivery("m-1", "amount=5", 1));
        RecordingDelivery duplicate = delivery("m-1", "amount=5", 1);
        runtime.onDelivery(duplicate);
        assertThat(duplicate.settlement).isEqualTo(Settlement.ACK);
        assertThat(duplicate.settlements).isEqualTo(1);
        assertThat(handled).hasValue(1);
        assertThat(counter.read("total")).isEqualTo(5);
        assertThat(decisions).containsExactly(Decision.PROCESSED, Decision.DUPLICATE);
    }

    @Test
    void messageWithoutIdIsDeadLetteredAtOnce() {
        assertDeadLetteredAtOnce(delivery(null, "x", 1), settings,
                "non-retryable: message has no message id; it cannot be de-duplicated");
        assertDeadLetteredAtOnce(delivery("", "x", 1), settings,
                "non-retryable: message has no message id; it cannot be de-duplicated");
    }

    @Test
    void messageWithAnInvalidIdIsDeadLetteredAtOnceNamingTheRule() {
        RecordingDelivery d = delivery("order 42", "x", 1);
        assertDeadLetteredAtOnce(d, settings, null);
        assertThat(d.deadLetterReason).startsWith("non-retryable: message id has a non-visible")
                .contains("visible ASCII");
        RecordingDelivery tooLong = delivery("m".repeat(256), "x", 1);
        assertDeadLetteredAtOnce(tooLong, settings, null);
        assertThat(tooLong.deadLetterReason).contains("at most 255");
    }

    @Test
    void oversizedBodyIsDeadLetteredAtOnce() {
        RecordingDelivery d = delivery("m-1", "0123456789abcdefX", 1);
        assertDeadLetteredAtOnce(d, settings.withMaxBodyBytes(16),
                "non-retryable: body of 17 bytes exceeds the limit of 16 bytes");
    }

    @Test
    void reusedIdWithAnotherBodyIsDeadLetteredAtOnce() {
        adding(5).onDelivery(delivery("m-1", "amount=5", 1));
        RecordingDelivery reused = delivery("m-1", "amount=6", 1);
        adding(6).onDelivery(reused);
        assertThat(reused.settlement).isEqualTo(Settlement.DEAD_LETTER);
        assertThat(reused.deadLetterReason).isEqualTo("non-retryable: " + Inbox.REUSED_ID);
        assertThat(reused.failed.number()).isEqualTo(1);
        assertThat(counter.read("total")).isEqualTo(5);
    }

    @Test
    void retryableFailureIsRetriedWithBackoffUntilTheLastAttemptThenDeadLettered() {
        ConsumerRuntime<InMemoryUnitOfWork> runtime = failing(new IllegalStateException("database down"));
        RecordingDelivery first = delivery("m-1", "x", 1);
        RecordingDelivery second = delivery("m-1", "x", 2);
        RecordingDelivery third = delivery("m-1", "x", 3);
        runtime.onDelivery(first);
        runtime.onDelivery(second);
        runtime.onDelivery(third);

        assertThat(first.settlement).isEqualTo(Settlement.RETRY);
        assertThat(first.retryDelay).isEqualTo(Duration.ofMillis(100));
        assertThat(second.settlement).isEqualTo(Settlement.RETRY);
        assertThat(second.retryDelay).isEqualTo(Duration.ofMillis(200));
        assertThat(third.settlement).isEqualTo(Settlement.DEAD_LETTER);
        assertThat(third.deadLetterReason).isEqualTo("gave up after 3 attempts: IllegalStateException: database down");
        assertThat(List.of(first.failed, second.failed, third.failed)).extracting(AttemptRecord::number)
                .containsExactly(1, 2, 3);
        assertThat(first.failed.error()).isEqualTo("IllegalStateException: database down");
        assertThat(counter.read("total")).as("a failed effect's writes roll back").isZero();
        assertThat(inbox.recorded(InboxKey.of(CONSUMER, "m-1"))).as("nor is its key kept").isEmpty();
        assertThat(decisions).containsExactly(Decision.RETRIED, Decision.RETRIED, Decision.DEAD_LETTERED);
    }

    @Test
    void failingMessageReachesTheDeadLetterQueueAfterExactlyThreeAttemptsWithThreeRecords() {
        transport.subscribe(queue, failing(new IllegalStateException("database down")));
        transport.publish(queue, OutgoingMessage.of("m-1", bytes("amount=5")));
        Eventually.await(PATIENCE, "a dead letter", () -> transport.depth(queue) == 1);

        DeadLetter dl = transport.peek(queue, 1).get(0).deadLetter();
        assertThat(handled).hasValue(3);
        assertThat(dl.attempts()).extracting(AttemptRecord::number).containsExactly(1, 2, 3);
        assertThat(dl.attempts()).extracting(AttemptRecord::error).containsOnly("IllegalStateException: database down");
        assertThat(dl.attempts().get(1).at()).isAfterOrEqualTo(dl.attempts().get(0).at().plusMillis(100));
        assertThat(dl.reason()).isEqualTo("gave up after 3 attempts: IllegalStateException: database down");
        assertThat(dl.original().rawId()).isEqualTo("m-1");
        assertThat(dl.originQueue()).isEqualTo(queue);
    }

    @Test
    void nonRetryableFailureIsDeadLetteredAtOnce() {
        RecordingDelivery d = delivery("m-1", "x", 1);
        failing(new NonRetryableException("amount is negative")).onDelivery(d);
        assertThat(d.settlement).isEqualTo(Settlement.DEAD_LETTER);
        assertThat(d.deadLetterReason).isEqualTo("non-retryable: NonRetryableException: amount is negative");
        assertThat(d.failed.number()).isEqualTo(1);

        transport.subscribe(queue, failing(new NonRetryableException("amount is negative")));
        transport.publish(queue, OutgoingMessage.of("m-2", bytes("x")));
        Eventually.await(PATIENCE, "a dead letter", () -> transport.depth(queue) == 1);
        assertThat(transport.peek(queue, 1).get(0).deadLetter().attempts()).hasSize(1);
        assertThat(handled).hasValue(2);
    }

    @Test
    void messagesWithoutAUsableIdGoThroughTheTransportToTheDeadLetterQueue() {
        transport.subscribe(queue, adding(5));
        transport.publishRaw(queue, null, bytes("no id"), Map.of());
        transport.publishRaw(queue, "bad\nid", bytes("bad id"), Map.of());
        Eventually.await(PATIENCE, "two dead letters", () -> transport.depth(queue) == 2);
        assertThat(transport.peek(queue, 2)).allSatisfy(e -> {
            assertThat(e.deadLetter().reason()).startsWith("non-retryable: ");
            assertThat(e.deadLetter().attempts()).extracting(AttemptRecord::number).containsExactly(1);
        });
        assertThat(handled).hasValue(0);
    }

    @Test
    void duplicatesThroughTheTransportRunTheEffectOnce() {
        transport.subscribe(queue, adding(5));
        for (int i = 0; i < 5; i++) {
            transport.publish(queue, OutgoingMessage.of("m-1", bytes("amount=5")));
        }
        Eventually.await(PATIENCE, "five decisions", () -> decisions.size() == 5);
        assertThat(counter.read("total")).isEqualTo(5);
        assertThat(decisions).containsOnlyOnce(Decision.PROCESSED);
        assertThat(transport.depth(queue)).isZero();
    }

    private void assertDeadLetteredAtOnce(RecordingDelivery d, ConsumerSettings s, String reason) {
        runtime(s, (m, w) -> handled.incrementAndGet()).onDelivery(d);
        assertThat(d.settlement).isEqualTo(Settlement.DEAD_LETTER);
        assertThat(d.settlements).isEqualTo(1);
        if (reason != null) {
            assertThat(d.deadLetterReason).isEqualTo(reason);
        }
        assertThat(d.failed.number()).isEqualTo(1);
        assertThat(handled).as("the handler never ran").hasValue(0);
    }

    private ConsumerRuntime<InMemoryUnitOfWork> adding(long amount) {
        return runtime(settings, (message, work) -> {
            handled.incrementAndGet();
            counter.add(work, "total", amount);
        });
    }

    private ConsumerRuntime<InMemoryUnitOfWork> failing(RuntimeException failure) {
        return runtime(settings, (message, work) -> {
            handled.incrementAndGet();
            counter.add(work, "total", 1);
            throw failure;
        });
    }

    private ConsumerRuntime<InMemoryUnitOfWork> runtime(ConsumerSettings s, MessageHandler<InMemoryUnitOfWork> handler) {
        return new ConsumerRuntime<>(s, inbox, handler, RandomSource.fixed(0.5), Clock.system(),
                (consumer, decision, latency) -> {
                    reportedBy.add(consumer);
                    decisions.add(decision);
                });
    }

    private RecordingDelivery delivery(String id, String body, int attempt) {
        return new RecordingDelivery(new Message(id, bytes(body), Map.of(), queue), attempt);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
