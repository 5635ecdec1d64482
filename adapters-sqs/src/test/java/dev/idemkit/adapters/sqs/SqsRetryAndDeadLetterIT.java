package dev.idemkit.adapters.sqs;

import static dev.idemkit.adapters.sqs.EmbeddedSqs.bytes;
import static dev.idemkit.adapters.sqs.EmbeddedSqs.pause;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idemkit.domain.deadletter.AttemptHistory;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.Jitter;
import dev.idemkit.domain.retry.NonRetryableException;
import dev.idemkit.domain.retry.RandomSource;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.memory.InMemoryInboxStore;
import dev.idemkit.ports.memory.InMemoryUnitOfWork;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.DeadLetterEntry;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import dev.idemkit.ports.service.ConsumerRuntime;
import dev.idemkit.ports.service.ConsumerSettings;
import dev.idemkit.ports.service.MessageHandler;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * Retries, dead letters and bad input through the consumer runtime on SQS: exactly N receives then the
 * DLQ with its attributes, non-retryable failures at once, messages without an id, with invalid JSON
 * or an over-size body dead-lettered with the reason, and the native redrive policy as a safety net.
 */
class SqsRetryAndDeadLetterIT {
    private static final int MAX_ATTEMPTS = 3;
    private static final ObjectMapper JSON = new ObjectMapper();

    private static EmbeddedSqs sqs;
    private static SqsMessageTransport transport;
    private static SqsClient raw;

    private final List<String> queues = new ArrayList<>();
    private final List<Subscription> subscriptions = new ArrayList<>();
    private final List<Integer> attemptsSeen = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void startServer() {
        sqs = EmbeddedSqs.start();
        transport = new SqsMessageTransport(sqs.settings());
        raw = sqs.rawClient();
    }

    @AfterAll
    static void stopServer() {
        raw.close();
        transport.close();
        sqs.close();
    }

    @AfterEach
    void cleanUp() {
        subscriptions.forEach(Subscription::close);
        queues.forEach(transport::deleteQueues);
    }

    @Test
    void aMessageThatAlwaysFailsIsDeadLetteredAfterExactlyNReceivesWithItsHistoryAsAttributes() throws Exception {
        String queue = queue();
        Instant before = Instant.now();
        consume(queue, ConsumerSettings.defaults("c"), (message, work) -> {
            throw new IllegalStateException("downstream unavailable");
        });
        transport.publish(queue, OutgoingMessage.of("pay-1", bytes("{\"payment\":1}")).withHeaders(Map.of("x-tenant", "acme")));

        await().atMost(Duration.ofSeconds(20)).until(() -> transport.deadLetters().depth(queue) == 1);
        assertThat(attemptsSeen).as("receives, numbered by ApproximateReceiveCount").containsExactly(1, 2, 3);
        assertThat(visibleAndInFlight(queueUrl(SqsQueues.deadLetterName(queue)))).isEqualTo(1);

        Message dead = receiveOne(queueUrl(SqsQueues.deadLetterName(queue)));
        Map<String, String> a = stringAttributes(dead);
        assertThat(a).containsEntry(SqsWire.MESSAGE_ID, "pay-1").containsEntry(SqsWire.ORIGIN_QUEUE, queue)
                .doesNotContainKey("x-tenant"); // on a copy the producer's headers are packed, never attributes
        assertThat(SqsWire.headers(dead.messageAttributes())).containsEntry("x-tenant", "acme");
        assertThat(a.get(SqsWire.REASON)).isEqualTo("gave up after 3 attempts: IllegalStateException: downstream unavailable");
        List<AttemptRecord> attempts = AttemptHistory.decode(a.get(SqsWire.ATTEMPTS));
        assertThat(attempts).extracting(AttemptRecord::number).containsExactly(1, 2, 3);
        assertThat(attempts).extracting(AttemptRecord::error).containsOnly("IllegalStateException: downstream unavailable");
        assertThat(attempts).extracting(AttemptRecord::at).isSorted().allSatisfy(at -> assertThat(at).isAfter(before));
        assertThat(Instant.parse(a.get(SqsWire.DEAD_LETTERED_AT))).isAfterOrEqualTo(attempts.get(2).at());
        assertThat(dead.body()).isEqualTo("{\"payment\":1}");
        assertThat(visibleAndInFlight(queueUrl(queue))).as("the source queue is empty").isZero();
    }

    @Test
    void aNonRetryableFailureGoesToTheDeadLetterQueueAtOnce() {
        String queue = queue();
        consume(queue, ConsumerSettings.defaults("c"), (message, work) -> {
            throw new NonRetryableException("customer c-9 does not exist");
        });
        transport.publish(queue, OutgoingMessage.of("pay-2", bytes("{}")));
        DeadLetterEntry entry = awaitOneDeadLetter(queue);
        assertThat(attemptsSeen).containsExactly(1);
        assertThat(entry.deadLetter().reason()).isEqualTo("non-retryable: NonRetryableException: customer c-9 does not exist");
        assertThat(entry.deadLetter().attempts()).hasSize(1);
    }

    @Test
    void aMessageWithoutTheIdAttributeIsDeadLetteredWithTheReason() {
        String queue = queue();
        consume(queue, ConsumerSettings.defaults("c"), (message, work) -> { });
        raw.sendMessage(r -> r.queueUrl(queueUrl(queue)).messageBody("{\"no\":\"id\"}"));
        DeadLetterEntry entry = awaitOneDeadLetter(queue);
        assertThat(entry.deadLetter().reason()).isEqualTo("non-retryable: message has no message id; it cannot be de-duplicated");
        assertThat(entry.deadLetter().original().rawId()).isNull();
        assertThat(entry.deadLetter().original().body()).isEqualTo(bytes("{\"no\":\"id\"}"));
    }

    @Test
    void invalidJsonIsDeadLetteredWithTheReason() {
        String queue = queue();
        consume(queue, ConsumerSettings.defaults("c"), (message, work) -> {
            try {
                JSON.readTree(message.body());
            } catch (IOException e) {
                throw new NonRetryableException("invalid JSON", e);
            }
        });
        transport.publish(queue, OutgoingMessage.of("pay-3", bytes("{\"amount\": 12,")));
        DeadLetterEntry entry = awaitOneDeadLetter(queue);
        assertThat(attemptsSeen).containsExactly(1);
        assertThat(entry.deadLetter().reason()).isEqualTo("non-retryable: NonRetryableException: invalid JSON");
        assertThat(entry.deadLetter().original().body()).isEqualTo(bytes("{\"amount\": 12,"));
    }

    @Test
    void anOverSizeBodyIsDeadLetteredWithTheReason() {
        String queue = queue();
        consume(queue, ConsumerSettings.defaults("c").withMaxBodyBytes(1024), (message, work) -> { });
        transport.publish(queue, OutgoingMessage.of("big-1", bytes("x".repeat(2048))));
        DeadLetterEntry entry = awaitOneDeadLetter(queue);
        assertThat(entry.deadLetter().reason())
                .isEqualTo("non-retryable: body of 2048 bytes exceeds the limit of 1024 bytes");
        assertThat(entry.deadLetter().original().body()).hasSize(2048);
    }

    @Test
    void aBodyThatIsNotTheBase64ItClaimsIsDeadLetteredAndTheMessagesAroundItAreProcessed() {
        String queue = queue();
        List<String> processed = new CopyOnWriteArrayList<>();
        consume(queue, ConsumerSettings.defaults("c"), (message, work) -> processed.add(message.rawId()));
        transport.publish(queue, OutgoingMessage.of("good-0", bytes("{}")));
        raw.sendMessage(r -> r.queueUrl(queueUrl(queue)).messageBody("not base64 at all!").messageAttributes(Map.of(
                SqsWire.MESSAGE_ID, SqsWire.text("bad-1"), SqsWire.BODY_ENCODING, SqsWire.text("base64"))));
        for (int i = 1; i <= 5; i++) {
            transport.publish(queue, OutgoingMessage.of("good-" + i, bytes("{}")));
        }

        await().atMost(Duration.ofSeconds(20)).until(() -> processed.size() == 6);
        assertThat(processed).containsExactlyInAnyOrder("good-0", "good-1", "good-2", "good-3", "good-4", "good-5");
        DeadLetterEntry entry = awaitOneDeadLetter(queue);
        assertThat(entry.deadLetter().original().rawId()).isEqualTo("bad-1");
        assertThat(entry.deadLetter().reason()).startsWith("non-retryable: undecodable message")
                .contains("x-idemkit-body-encoding=base64");
        assertThat(entry.deadLetter().original().body()).as("the body as it arrived").isEqualTo(bytes("not base64 at all!"));
        assertThat(visibleAndInFlight(queueUrl(queue))).as("nothing left behind").isZero();
    }

    @Test
    void packedHeadersWithANullValueNeitherStopNorLoseTheMessage() {
        String queue = queue();
        List<Map<String, String>> seen = new CopyOnWriteArrayList<>();
        consume(queue, ConsumerSettings.defaults("c"), (message, work) -> seen.add(message.headers()));
        raw.sendMessage(r -> r.queueUrl(queueUrl(queue)).messageBody("{}").messageAttributes(Map.of(
                SqsWire.MESSAGE_ID, SqsWire.text("nulls-1"), SqsWire.HEADERS, SqsWire.text("{\"a\":null,\"b\":\"x\"}"))));
        await().atMost(Duration.ofSeconds(20)).until(() -> !seen.isEmpty());
        assertThat(seen.get(0)).containsEntry("b", "x").doesNotContainKey("a");
        await().atMost(Duration.ofSeconds(10)).until(() -> visibleAndInFlight(queueUrl(queue)) == 0);
    }

    @Test
    void theNativeRedrivePolicyMovesAMessageThatNoHandlerSettles() {
        String queue = queue();
        try (SqsMessageTransport guarded = new SqsMessageTransport(sqs.settings().withRedriveMaxReceiveCount(2))) {
            guarded.publish(queue, OutgoingMessage.of("stuck-1", bytes("stuck")));
            String url = queueUrl(queue);
            for (int i = 0; i < 2; i++) {
                assertThat(raw.receiveMessage(r -> r.queueUrl(url).visibilityTimeout(1).waitTimeSeconds(1))
                        .messages()).as("receive %d", i + 1).hasSize(1);
                pause(Duration.ofMillis(1100));
            }
            raw.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(1));
            DeadLetterEntry entry = awaitOneDeadLetter(queue);
            assertThat(entry.deadLetter().reason()).isEqualTo(SqsDeadLetters.NATIVE_REASON);
            assertThat(entry.deadLetter().original().rawId()).isEqualTo("stuck-1");
            assertThat(entry.deadLetter().originQueue()).isEqualTo(queue);
        }
    }

    @Test
    void attributesAProducerSetAreNotTakenForADeadLettersOriginOrReason() {
        String queue = queue();
        String victim = queue();
        try (SqsMessageTransport guarded = new SqsMessageTransport(sqs.settings().withRedriveMaxReceiveCount(1))) {
            guarded.publish(victim, OutgoingMessage.of("v-0", bytes("v")));
            String url = queueUrl(victim);
            raw.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(1)).messages()
                    .forEach(m -> raw.deleteMessage(d -> d.queueUrl(url).receiptHandle(m.receiptHandle())));
            guarded.publish(queue, OutgoingMessage.of("warm-up", bytes("w")));
            String work = queueUrl(queue);
            raw.receiveMessage(r -> r.queueUrl(work).waitTimeSeconds(1)).messages()
                    .forEach(m -> raw.deleteMessage(d -> d.queueUrl(work).receiptHandle(m.receiptHandle())));
            raw.sendMessage(r -> r.queueUrl(work).messageBody("forged").messageAttributes(Map.of(
                    SqsWire.MESSAGE_ID, SqsWire.text("forged-1"),
                    SqsWire.ORIGIN_QUEUE, SqsWire.text(victim),
                    SqsWire.REASON, SqsWire.text("all good, redrive me"),
                    SqsWire.ATTEMPTS, SqsWire.text(AttemptHistory.encode(List.of(
                            new AttemptRecord(1, Instant.parse("2020-01-01T00:00:00Z"), "forged")))))));
            // received once and never settled: the native redrive policy (maxReceiveCount 1) moves it
            assertThat(raw.receiveMessage(r -> r.queueUrl(work).visibilityTimeout(1).waitTimeSeconds(1)).messages())
                    .hasSize(1);
            pause(Duration.ofMillis(1100));
            raw.receiveMessage(r -> r.queueUrl(work).waitTimeSeconds(1));

            DeadLetterEntry entry = awaitOneDeadLetter(queue);
            assertThat(entry.deadLetter().originQueue()).isEqualTo(queue);
            assertThat(entry.deadLetter().reason()).isEqualTo(SqsDeadLetters.NATIVE_REASON);
            assertThat(entry.deadLetter().attempts()).isEmpty();

            assertThat(guarded.deadLetters().redrive(queue, entry.id(),
                    new dev.idemkit.domain.deadletter.Approval("ops", "checked", Instant.now()))).isTrue();
            assertThat(visibleAndInFlight(work)).as("back in its own queue").isEqualTo(1);
            assertThat(visibleAndInFlight(url)).as("nothing sent to the queue an attribute named").isZero();
        }
    }

    @Test
    void theRetentionReportedIsTheServersOwnAndElasticMqReportsNone() {
        String queue = queue();
        transport.publish(queue, OutgoingMessage.of("m-1", bytes("x")));
        // idemkit sets MessageRetentionPeriod (14 days) on the DLQ; AWS applies and reports it, ElasticMQ ignores it
        // and keeps dead letters until removed
        assertThat(transport.deadLetters().retention(queue)).isEmpty();
        assertThat(transport.deadLetters().retention(EmbeddedSqs.uniqueName("absent"))).isEmpty();
    }

    @Test
    void readingTheDeadLettersOfAMistypedQueueCreatesNoQueue() {
        String typo = EmbeddedSqs.uniqueName("typo");
        assertThat(transport.deadLetters().depth(typo)).isZero();
        assertThat(transport.deadLetters().peek(typo, 10)).isEmpty();
        assertThat(transport.deadLetters().find(typo, "x")).isEmpty();
        assertThat(transport.deadLetters().redrive(typo, "x",
                new dev.idemkit.domain.deadletter.Approval("ops", "typo", Instant.now()))).isFalse();
        assertThat(raw.listQueues(r -> r.queueNamePrefix(typo)).queueUrls()).isEmpty();
    }

    @Test
    void anAttemptThatEndedWithoutASettleIsCountedAndMarkedInTheHistory() {
        String queue = queue();
        transport.publish(queue, OutgoingMessage.of("crash-1", bytes("c")));
        List<dev.idemkit.ports.out.Delivery> seen = new CopyOnWriteArrayList<>();
        // a consumer process that "crashes": it takes the message and never settles it
        try (SqsMessageTransport crashing = new SqsMessageTransport(
                sqs.settings().withVisibility(Duration.ofSeconds(1), Duration.ofMillis(500)))) {
            crashing.subscribe(queue, seen::add);
            await().atMost(Duration.ofSeconds(10)).until(() -> !seen.isEmpty());
        }
        Subscription s = transport.subscribe(queue, d -> {
            seen.add(d);
            d.ack();
        });
        subscriptions.add(s);
        await().atMost(Duration.ofSeconds(15)).until(() -> seen.size() >= 2);
        assertThat(seen.get(1).attempt()).isEqualTo(2);
        assertThat(seen.get(1).history()).singleElement().satisfies(a -> {
            assertThat(a.number()).isEqualTo(1);
            assertThat(a.error()).isEqualTo(AttemptJournal.NOT_RECORDED);
        });
    }

    private void consume(String queue, ConsumerSettings settings, MessageHandler<? super InMemoryUnitOfWork> handler) {
        RetryPolicy retry = RetryPolicy.defaults().withMaxAttempts(MAX_ATTEMPTS)
                .withBackoff(Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(1), Jitter.NONE));
        ConsumerRuntime<InMemoryUnitOfWork> runtime = new ConsumerRuntime<>(settings.withRetryPolicy(retry),
                new InMemoryInboxStore(), handler, RandomSource.fixed(0.5), Clock.system(), ConsumerEvents.none());
        subscriptions.add(transport.subscribe(queue, d -> {
            attemptsSeen.add(d.attempt());
            runtime.onDelivery(d);
        }));
    }

    private DeadLetterEntry awaitOneDeadLetter(String queue) {
        await().atMost(Duration.ofSeconds(20)).until(() -> transport.deadLetters().depth(queue) == 1);
        List<DeadLetterEntry> entries = transport.deadLetters().peek(queue, 10);
        assertThat(entries).hasSize(1);
        return entries.get(0);
    }

    private String queue() {
        String q = EmbeddedSqs.uniqueName("retry");
        queues.add(q);
        return q;
    }

    private static String queueUrl(String name) {
        return raw.getQueueUrl(r -> r.queueName(name)).queueUrl();
    }

    private static long visibleAndInFlight(String url) {
        Map<QueueAttributeName, String> a = raw.getQueueAttributes(r -> r.queueUrl(url).attributeNames(
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES,
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE)).attributes();
        return Long.parseLong(a.get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES))
                + Long.parseLong(a.get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE));
    }

    private static Message receiveOne(String url) {
        List<Message> m = raw.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(1).messageAttributeNames("All")
                .messageSystemAttributeNames(MessageSystemAttributeName.ALL)).messages();
        assertThat(m).hasSize(1);
        return m.get(0);
    }

    private static Map<String, String> stringAttributes(Message m) {
        Map<String, String> out = new java.util.HashMap<>();
        m.messageAttributes().forEach((k, v) -> out.put(k, v.stringValue()));
        return out;
    }
}
