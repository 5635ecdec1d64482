package dev.idemkit.ports.contract;

import static dev.idemkit.ports.contract.ContractGenerators.fresh;
import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;

import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.domain.deadletter.DeadLetterHeaders;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.deadletter.DeadLetter;
import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.Jitter;
import dev.idemkit.domain.retry.RandomSource;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.contract.ContractGenerators.Schedule;
import dev.idemkit.ports.memory.InMemoryCounter;
import dev.idemkit.ports.memory.InMemoryInboxStore;
import dev.idemkit.ports.memory.InMemoryUnitOfWork;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.DeadLetterEntry;
import dev.idemkit.ports.out.DeadLetterQueue;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import dev.idemkit.ports.service.ConsumerRuntime;
import dev.idemkit.ports.service.ConsumerSettings;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link MessageTransport} with its {@link DeadLetterQueue} passes unchanged: the
 * fields of a delivery, retry with the next attempt number and the history, a waiting retry that
 * blocks nothing else, dead letters visible without being consumed, find, redrive with the approval,
 * a closed subscription, and duplicates published through the transport running the effect once per id.
 *
 * <p>Every test works on fresh queues from {@link #newQueue()}; they are closed and deleted after the test.
 */
public abstract class MessageTransportContract {
    /** The headers a redrive records on the republished message: the domain's one vocabulary. */
    public static final String REDRIVE_APPROVED_BY = DeadLetterHeaders.REDRIVE_APPROVED_BY;
    public static final String REDRIVE_REASON = DeadLetterHeaders.REDRIVE_REASON;
    /**
     * Examples of the end-to-end property: each one declares queues on a real broker and waits for
     * every delivery, about a second per example on RabbitMQ or SQS, so 10 schedules, not 1000.
     */
    protected static final int END_TO_END_EXAMPLES = 10;

    private final List<String> queues = new CopyOnWriteArrayList<>();
    private final List<Subscription> subscriptions = new CopyOnWriteArrayList<>();

    protected abstract MessageTransport transport();

    protected abstract DeadLetterQueue deadLetters();

    /** A fresh, unique queue name for one test; the adapter declares its topology on first use. */
    protected abstract String newQueue();

    /** Deletes everything the adapter created for that queue (work, retry, dead-letter queues). Called after each test. */
    protected abstract void deleteQueue(String queue);

    /** How long a test waits for something the transport must do; 30 s by default (SQS rounds delays up to seconds). */
    protected Duration patience() {
        return Duration.ofSeconds(30);
    }

    @AfterEach
    void closeSubscriptionsAndDeleteQueues() {
        subscriptions.forEach(Subscription::close);
        subscriptions.clear();
        queues.forEach(this::deleteQueue);
        queues.clear();
    }

    @Test
    void deliversAPublishedMessageWithItsIdBodyHeadersAndFirstAttempt() {
        String queue = queue();
        byte[] body = bytes("{\"order\":42,\"note\":\"ação\"}");
        transport().publish(queue, OutgoingMessage.of("order-42", body).withHeaders(Map.of("x-tenant", "acme")));
        List<Delivery> seen = new CopyOnWriteArrayList<>();
        subscribe(queue, d -> {
            seen.add(d);
            d.ack();
        });
        Eventually.await(patience(), "the delivery", () -> !seen.isEmpty());
        Delivery d = seen.get(0);
        assertThat(d.message().rawId()).isEqualTo("order-42");
        assertThat(d.message().body()).isEqualTo(body);
        assertThat(d.message().originQueue()).isEqualTo(queue);
        assertThat(d.message().headers()).containsEntry("x-tenant", "acme");
        assertThat(d.attempt()).isEqualTo(1);
        assertThat(d.history()).isEmpty();
    }

    @Test
    void retryRedeliversWithTheNextAttemptAndTheGrowingHistory() {
        String queue = queue();
        byte[] body = bytes("retry me");
        transport().publish(queue, OutgoingMessage.of("r-1", body));
        List<Delivery> seen = new CopyOnWriteArrayList<>();
        List<AttemptRecord> failures = new CopyOnWriteArrayList<>();
        subscribe(queue, d -> {
            seen.add(d);
            if (d.attempt() < 3) {
                AttemptRecord failed = new AttemptRecord(d.attempt(), millis(Instant.now()), "TimeoutException: try " + d.attempt());
                failures.add(failed);
                d.retryAfter(Duration.ofMillis(200), failed);
            } else {
                d.ack();
            }
        });
        Eventually.await(patience(), "three attempts", () -> seen.size() >= 3);
        assertThat(seen).extracting(Delivery::attempt).containsExactly(1, 2, 3);
        assertThat(truncated(seen.get(1).history())).isEqualTo(failures.subList(0, 1));
        assertThat(truncated(seen.get(2).history())).isEqualTo(failures);
        assertThat(seen.get(2).message().rawId()).isEqualTo("r-1");
        assertThat(seen.get(2).message().body()).isEqualTo(body);
    }

    @Test
    void aWaitingRetryDoesNotBlockOtherMessages() {
        String queue = queue();
        Map<String, Long> deliveredAt = new ConcurrentHashMap<>();
        AtomicLong retriedAt = new AtomicLong();
        AtomicLong secondAttemptAt = new AtomicLong();
        subscribe(queue, d -> {
            String id = d.message().rawId();
            if (id.equals("A") && d.attempt() == 1) {
                retriedAt.set(System.nanoTime());
                d.retryAfter(Duration.ofSeconds(2), new AttemptRecord(1, Instant.now(), "IOException: busy"));
                return;
            }
            if (id.equals("A")) {
                secondAttemptAt.compareAndSet(0, System.nanoTime());
            } else {
                deliveredAt.putIfAbsent(id, System.nanoTime());
            }
            d.ack();
        });
        transport().publish(queue, OutgoingMessage.of("A", bytes("A")));
        Eventually.await(patience(), "A's first attempt", () -> retriedAt.get() != 0);
        for (char c = 'B'; c <= 'Z'; c++) {
            transport().publish(queue, OutgoingMessage.of(String.valueOf(c), bytes(String.valueOf(c))));
        }
        Eventually.await(patience(), "A's second attempt", () -> secondAttemptAt.get() != 0);
        Eventually.await(patience(), "B..Z", () -> deliveredAt.size() == 25);

        long lastOther = deliveredAt.values().stream().mapToLong(Long::longValue).max().orElseThrow();
        assertThat(lastOther).as("B..Z were all delivered while A waited").isLessThan(secondAttemptAt.get());
        assertThat(Duration.ofNanos(secondAttemptAt.get() - retriedAt.get()))
                .as("A came back after roughly its 2 s delay").isGreaterThanOrEqualTo(Duration.ofMillis(1500));
    }

    @Test
    void aDeadLetterIsVisibleWithItsReasonAndAttemptsWithoutBeingConsumed() {
        String queue = queue();
        byte[] body = bytes("{\"bad\":true}");
        transport().publish(queue, OutgoingMessage.of("dl-1", body).withHeaders(Map.of("x-tenant", "acme")));
        List<AttemptRecord> failures = new CopyOnWriteArrayList<>();
        subscribe(queue, failOnceThenDeadLetter(failures, "gave up after 2 attempts: IllegalStateException: boom"));
        Eventually.await(patience(), "a dead letter", () -> deadLetters().depth(queue) == 1);

        List<DeadLetterEntry> first = deadLetters().peek(queue, 10);
        List<DeadLetterEntry> second = deadLetters().peek(queue, 10);
        assertThat(deadLetters().depth(queue)).as("depth after two peeks").isEqualTo(1);
        assertThat(first).hasSize(1);
        assertThat(second).extracting(DeadLetterEntry::id).isEqualTo(first.stream().map(DeadLetterEntry::id).toList());
        DeadLetter dl = first.get(0).deadLetter();
        assertThat(dl.original().rawId()).isEqualTo("dl-1");
        assertThat(dl.original().body()).isEqualTo(body);
        assertThat(dl.original().headers()).containsEntry("x-tenant", "acme");
        assertThat(dl.originQueue()).isEqualTo(queue);
        assertThat(dl.reason()).isEqualTo("gave up after 2 attempts: IllegalStateException: boom");
        assertThat(truncated(dl.attempts())).isEqualTo(failures);
        assertThat(dl.deadLetteredAt()).isAfterOrEqualTo(failures.get(1).at().minusSeconds(1));
    }

    @Test
    void findReturnsADeadLetterByItsIdAndNothingForAnUnknownId() {
        String queue = queue();
        transport().publish(queue, OutgoingMessage.of("dl-2", bytes("x")));
        subscribe(queue, d -> d.deadLetter("non-retryable: malformed", new AttemptRecord(d.attempt(), Instant.now(), "malformed")));
        Eventually.await(patience(), "a dead letter", () -> deadLetters().depth(queue) == 1);
        DeadLetterEntry entry = deadLetters().peek(queue, 1).get(0);

        assertThat(deadLetters().find(queue, entry.id())).hasValueSatisfying(found -> {
            assertThat(found.id()).isEqualTo(entry.id());
            assertThat(found.deadLetter().original().rawId()).isEqualTo("dl-2");
            assertThat(found.deadLetter().reason()).isEqualTo("non-retryable: malformed");
        });
        assertThat(deadLetters().find(queue, fresh("no-such-dead-letter"))).isEmpty();
        assertThat(deadLetters().depth(queue)).isEqualTo(1);
    }

    @Test
    void redriveReturnsTheMessageToItsQueueWithTheApproval() {
        String queue = queue();
        byte[] body = bytes("redrive me");
        transport().publish(queue, OutgoingMessage.of("dl-3", body));
        List<Delivery> redriven = new CopyOnWriteArrayList<>();
        subscribe(queue, d -> {
            if (d.message().headers().containsKey(REDRIVE_APPROVED_BY)) {
                redriven.add(d);
                d.ack();
            } else {
                d.deadLetter("non-retryable: needs a fix", new AttemptRecord(d.attempt(), Instant.now(), "needs a fix"));
            }
        });
        Eventually.await(patience(), "a dead letter", () -> deadLetters().depth(queue) == 1);
        String id = deadLetters().peek(queue, 1).get(0).id();

        Instant approvedAt = Instant.parse("2026-12-02T10:15:30.123Z");
        assertThat(deadLetters().redrive(queue, id, new Approval("ops-oncall", "fixed in release 1.2.3", approvedAt)))
                .isTrue();
        Eventually.await(patience(), "the redriven delivery", () -> !redriven.isEmpty());
        Delivery d = redriven.get(0);
        assertThat(d.message().rawId()).isEqualTo("dl-3");
        assertThat(d.message().body()).isEqualTo(body);
        assertThat(d.message().originQueue()).isEqualTo(queue);
        assertThat(d.message().headers()).as("the one redrive vocabulary, on every transport")
                .containsEntry(DeadLetterHeaders.REDRIVE_APPROVED_BY, "ops-oncall")
                .containsEntry(DeadLetterHeaders.REDRIVE_REASON, "fixed in release 1.2.3")
                .containsEntry(DeadLetterHeaders.REDRIVE_APPROVED_AT, approvedAt.toString())
                .containsEntry(DeadLetterHeaders.PREVIOUS_REASON, "non-retryable: needs a fix")
                .doesNotContainKeys(DeadLetterHeaders.DEAD_LETTER.toArray(String[]::new));
        assertThat(deadLetters().depth(queue)).isZero();
        assertThat(deadLetters().find(queue, id)).isEmpty();
    }

    @Test
    void redriveOfAnUnknownIdReturnsFalse() {
        String queue = queue();
        assertThat(deadLetters().redrive(queue, fresh("no-such-dead-letter"),
                new Approval("ops-oncall", "checking", Instant.now()))).isFalse();
        assertThat(deadLetters().depth(queue)).isZero();
    }

    @Test
    void aClosedSubscriptionReceivesNothingAndLosesNothing() {
        String queue = queue();
        AtomicInteger closedOnes = new AtomicInteger();
        Subscription closed = transport().subscribe(queue, d -> {
            closedOnes.incrementAndGet();
            d.ack();
        });
        closed.close();
        transport().publish(queue, OutgoingMessage.of("after-close", bytes("late")));
        Eventually.pause(1000);
        assertThat(closedOnes).as("deliveries to the closed subscription").hasValue(0);

        List<String> seen = new CopyOnWriteArrayList<>();
        subscribe(queue, d -> {
            seen.add(d.message().rawId());
            d.ack();
        });
        Eventually.await(patience(), "the message, for the next subscriber", () -> !seen.isEmpty());
        assertThat(seen).containsExactly("after-close");
    }

    /** Law: published duplicates consumed through ConsumerRuntime and an inbox add exactly the sum over distinct ids. */
    @Test
    void duplicatesPublishedThroughTheTransportRunTheEffectOncePerId() {
        qt().withExamples(END_TO_END_EXAMPLES).withShrinkCycles(20).forAll(ContractGenerators.duplicateSchedules())
                .checkAssert(this::consumesOncePerId);
    }

    private void consumesOncePerId(Schedule schedule) {
        String queue = queue();
        InMemoryInboxStore inbox = new InMemoryInboxStore();
        InMemoryCounter counter = new InMemoryCounter();
        ConcurrentMap<ConsumerEvents.Decision, AtomicInteger> decisions = new ConcurrentHashMap<>();
        AtomicLong lastDecision = new AtomicLong(System.nanoTime());
        RetryPolicy retry = RetryPolicy.defaults().withBackoff(
                Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(1), Jitter.FULL));
        ConsumerRuntime<InMemoryUnitOfWork> runtime = new ConsumerRuntime<>(
                ConsumerSettings.defaults("contract-consumer").withRetryPolicy(retry), inbox,
                (message, work) -> counter.add(work, "total", amountOf(message.rawId())),
                RandomSource.fixed(0.5), Clock.system(), (consumer, decision, latency) -> {
                    decisions.computeIfAbsent(decision, k -> new AtomicInteger()).incrementAndGet();
                    lastDecision.set(System.nanoTime());
                });
        Subscription subscription = subscribe(queue, runtime);
        for (int id : schedule.withDuplicates()) {
            transport().publish(queue, OutgoingMessage.of("m-" + id, bytes("amount=" + amountOf("m-" + id))));
        }
        long expected = schedule.distinct().stream().mapToLong(id -> amountOf("m-" + id)).sum();
        int published = schedule.withDuplicates().size();
        Eventually.await(patience(), "every publish consumed (or, with broker-side dedup, the effects done and quiet)",
                () -> count(decisions) == published || (counter.read("total") == expected
                        && System.nanoTime() - lastDecision.get() > Duration.ofMillis(500).toNanos()));
        subscription.close();
        subscriptions.remove(subscription);
        assertThat(counter.read("total")).as("effects of %s", schedule.withDuplicates()).isEqualTo(expected);
        assertThat(decisions.getOrDefault(ConsumerEvents.Decision.PROCESSED, new AtomicInteger()))
                .as("processed deliveries").hasValue(schedule.distinct().size());
    }

    private static int count(Map<ConsumerEvents.Decision, AtomicInteger> decisions) {
        return decisions.values().stream().mapToInt(AtomicInteger::get).sum();
    }

    private static long amountOf(String messageId) {
        return Long.parseLong(messageId.substring(2)) * 7;
    }

    private DeliveryHandler failOnceThenDeadLetter(List<AttemptRecord> failures, String reason) {
        return d -> {
            AttemptRecord failed = new AttemptRecord(d.attempt(), millis(Instant.now()), "IllegalStateException: boom");
            failures.add(failed);
            if (d.attempt() == 1) {
                d.retryAfter(Duration.ofMillis(100), failed);
            } else {
                d.deadLetter(reason, failed);
            }
        };
    }

    /** A fresh queue, deleted after the test. */
    protected final String queue() {
        String queue = newQueue();
        queues.add(queue);
        return queue;
    }

    /** Subscribes and closes the subscription after the test. */
    protected final Subscription subscribe(String queue, DeliveryHandler handler) {
        Subscription s = transport().subscribe(queue, handler);
        subscriptions.add(s);
        return s;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static Instant millis(Instant t) {
        return t.truncatedTo(ChronoUnit.MILLIS);
    }

    /** Attempts as a transport must keep them: numbers and errors exact, instants to the millisecond. */
    private static List<AttemptRecord> truncated(List<AttemptRecord> attempts) {
        List<AttemptRecord> out = new ArrayList<>();
        for (AttemptRecord a : attempts) {
            out.add(new AttemptRecord(a.number(), millis(a.at()), a.error()));
        }
        return out;
    }
}
