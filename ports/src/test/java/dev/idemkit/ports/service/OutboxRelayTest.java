package dev.idemkit.ports.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.FailureClassifier;
import dev.idemkit.domain.retry.Jitter;
import dev.idemkit.domain.retry.RandomSource;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.memory.InMemoryOutboxStore;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutboxEntry;
import dev.idemkit.ports.out.OutboxEvents;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import dev.idemkit.ports.out.TransportException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/** The relay's decisions: what it publishes, with which id, where; what a failure does to a row and to its key. */
class OutboxRelayTest {
    private final InMemoryOutboxStore store = new InMemoryOutboxStore();
    private final Recording transport = new Recording();
    private final AtomicInteger published = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    private final AtomicInteger parked = new AtomicInteger();
    private Instant now = Instant.parse("2026-12-02T10:00:00Z");

    /** A transport that records publishes and refuses those to queues named in {@link #refusing}. */
    static class Recording implements MessageTransport {
        final List<String> sent = Collections.synchronizedList(new ArrayList<>());
        final Set<String> refusing = ConcurrentHashMap.newKeySet();

        @Override
        public Subscription subscribe(String queue, DeliveryHandler handler) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void publish(String queue, OutgoingMessage message) {
            if (refusing.contains(queue)) {
                throw new TransportException("the broker refused " + queue);
            }
            sent.add(queue + " " + message.id() + " " + new String(message.body(), StandardCharsets.UTF_8));
        }

        @Override
        public void close() {}
    }

    private OutboxRelay relay(int attempts) {
        RetryPolicy policy = new RetryPolicy(attempts, Backoff.exponential(Duration.ofSeconds(1), Duration.ofSeconds(8),
                Jitter.NONE), FailureClassifier.defaults());
        return new OutboxRelay(store, transport, q -> "broker-" + q, OutboxRelay.Settings.defaults().withRetryPolicy(policy),
                RandomSource.fixed(0.5), () -> now, new OutboxEvents() {
                    @Override
                    public void published(int n) {
                        published.addAndGet(n);
                    }

                    @Override
                    public void failed() {
                        failed.incrementAndGet();
                    }

                    @Override
                    public void parked() {
                        parked.incrementAndGet();
                    }
                });
    }

    private String append(String destination, String key, String body) {
        return store.append(OutboxMessage.of(destination, key, body.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void rowsArePublishedWithTheirRowIdAsMessageIdToTheTransportsQueueNameAndMarkedSent() {
        String id = append("events", "k", "one");
        try (OutboxRelay relay = relay(3)) {
            assertThat(relay.relayOnce()).isOne();
            assertThat(relay.relayOnce()).isZero();
        }
        assertThat(transport.sent).containsExactly("broker-events " + id + " one");
        assertThat(store.find(id).orElseThrow().state()).isEqualTo(OutboxEntry.State.SENT);
        assertThat(published).hasValue(1);
    }

    @Test
    void aFailedPublishIsRetriedAfterTheBackoffAndTheKeysLaterRowsWaitBehindIt() {
        String first = append("down", "k", "first");
        append("up", "k", "second");
        append("up", "other", "other");
        transport.refusing.add("broker-down");
        try (OutboxRelay relay = relay(5)) {
            relay.relayOnce();
            assertThat(transport.sent).as("the other key flows; 'second' waits behind 'first'")
                    .singleElement().asString().endsWith(" other");
            OutboxEntry e = store.find(first).orElseThrow();
            assertThat(e.nextAttemptAt()).contains(now.plusSeconds(1));
            assertThat(e.row().failures()).singleElement().satisfies(f -> assertThat(f.error()).contains("refused"));

            relay.relayOnce();
            assertThat(transport.sent).as("not due yet").hasSize(1);
            transport.refusing.clear();
            now = now.plusSeconds(2);
            relay.relayOnce();
        }
        assertThat(transport.sent).hasSize(3);
        assertThat(transport.sent.get(1)).endsWith(" first");
        assertThat(transport.sent.get(2)).endsWith(" second");
        assertThat(failed).hasValue(1);
    }

    @Test
    void afterItsLastAttemptARowIsParkedWithTheReasonAndItsKeyWaits() {
        String poison = append("down", "k", "poison");
        append("up", "k", "behind");
        transport.refusing.add("broker-down");
        try (OutboxRelay relay = relay(3)) {
            for (int i = 0; i < 10; i++) {
                relay.relayOnce();
                now = now.plusSeconds(60);
            }
        }
        OutboxEntry e = store.find(poison).orElseThrow();
        assertThat(e.state()).isEqualTo(OutboxEntry.State.PARKED);
        assertThat(e.parkReason()).hasValueSatisfying(r -> assertThat(r).contains("gave up after 3 attempts")
                .contains("refused"));
        assertThat(e.row().failures()).hasSize(3);
        assertThat(transport.sent).as("the row behind the parked one waits").isEmpty();
        assertThat(failed).hasValue(2);
        assertThat(parked).hasValue(1);
    }

    @Test
    void aNonRetryableFailureParksAtOnce() {
        String id = append("events", "k", "x");
        MessageTransport refusingArgs = new Recording() {
            @Override
            public void publish(String queue, OutgoingMessage message) {
                throw new IllegalArgumentException("name too long");
            }
        };
        try (OutboxRelay relay = new OutboxRelay(store, refusingArgs, UnaryOperator.identity(), OutboxRelay.Settings
                .defaults(), RandomSource.fixed(0.5), () -> now, OutboxEvents.none())) {
            relay.relayOnce();
        }
        assertThat(store.find(id).orElseThrow().parkReason()).hasValueSatisfying(r -> assertThat(r)
                .startsWith("non-retryable"));
    }

    @Test
    void aPublishThatThrowsAnErrorIsAFailureWithABackoffNotAHotLoop() {
        String id = append("events", "k", "huge");
        MessageTransport failing = new Recording() {
            @Override
            public void publish(String queue, OutgoingMessage message) {
                throw new AssertionError("not a RuntimeException");
            }
        };
        try (OutboxRelay relay = new OutboxRelay(store, failing, UnaryOperator.identity(), OutboxRelay.Settings.defaults(),
                RandomSource.fixed(0.5), () -> now, OutboxEvents.none())) {
            relay.relayOnce();
            assertThat(relay.relayOnce()).as("not due again at once").isZero();
        }
        OutboxEntry e = store.find(id).orElseThrow();
        assertThat(e.state()).isEqualTo(OutboxEntry.State.PENDING);
        assertThat(e.nextAttemptAt()).hasValueSatisfying(t -> assertThat(t).isAfter(now));
        assertThat(e.row().failures()).singleElement().satisfies(f -> assertThat(f.error()).contains("AssertionError"));
    }

    @Test
    void closeLetsAPassUnderWayFinishAndRecordWhatItPublished() throws Exception {
        java.util.concurrent.CountDownLatch publishing = new java.util.concurrent.CountDownLatch(1);
        MessageTransport slow = new Recording() {
            @Override
            public void publish(String queue, OutgoingMessage message) {
                publishing.countDown();
                try {
                    Thread.sleep(300);
                } catch (InterruptedException e) {
                    throw new AssertionError("a publish under way was interrupted");
                }
                super.publish(queue, message);
            }
        };
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            ids.add(append("events", "k", "m" + i));
        }
        OutboxRelay relay = new OutboxRelay(store, slow, UnaryOperator.identity(), OutboxRelay.Settings.defaults(),
                RandomSource.fixed(0.5), Instant::now, OutboxEvents.none());
        relay.start();
        assertThat(publishing.await(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        relay.close();
        int sent = ((Recording) slow).sent.size();
        assertThat(sent).as("the run finished: its three rows one after the other").isEqualTo(3);
        assertThat(ids).allSatisfy(id -> assertThat(store.find(id).orElseThrow().state())
                .isEqualTo(OutboxEntry.State.SENT));
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "{0} passes at once")
    @org.junit.jupiter.params.provider.ValueSource(ints = {1, 3})
    void theLoopsRelayWhatIsAppendedWhileTheyRunEachRowOnceInKeyOrderAndStopOnClose(int passes) throws Exception {
        try (OutboxRelay relay = new OutboxRelay(store, transport, UnaryOperator.identity(), OutboxRelay.Settings.defaults()
                .withPollInterval(Duration.ofMillis(50)).withPasses(passes).withBatch(2), RandomSource.fixed(0.5),
                Instant::now, OutboxEvents.none())) {
            relay.start();
            for (int i = 0; i < 60; i++) {
                append("events", "k" + (i % 3), "m" + i);
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (transport.sent.size() < 60 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
        }
        assertThat(transport.sent).hasSize(60).doesNotHaveDuplicates();
        for (int k = 0; k < 3; k++) {
            int key = k;
            List<Integer> order = transport.sent.stream().map(s -> Integer.parseInt(s.substring(s.lastIndexOf(" m") + 2)))
                    .filter(n -> n % 3 == key).toList();
            assertThat(order).as("key k%d in append order", key).isSorted();
        }
        assertThat(store.stats(Instant.now()).pending()).isZero();
    }

    /**
     * A broker outage uses no attempts: while the transport says it cannot publish, the loops take no rows (before,
     * every pass failed each key's head once more, and an outage of minutes parked them all), and they relay as soon
     * as it is up.
     */
    @Test
    void whileTheTransportIsDownTheLoopsTakeNoRowsSoAnOutageUsesNoAttempts() throws Exception {
        java.util.concurrent.atomic.AtomicReference<String> health = new java.util.concurrent.atomic.AtomicReference<>(
                "DOWN: the publishing connection is recovering");
        Recording down = new Recording() {
            @Override
            public String health() {
                return health.get();
            }
        };
        down.refusing.add("events"); // what a publish would do while the broker is away
        String id = append("events", "k", "one");
        RetryPolicy quick = new RetryPolicy(2, Backoff.exponential(Duration.ofMillis(5), Duration.ofMillis(10),
                Jitter.NONE), FailureClassifier.defaults());
        try (OutboxRelay relay = new OutboxRelay(store, down, UnaryOperator.identity(), OutboxRelay.Settings.defaults()
                .withPollInterval(Duration.ofMillis(20)).withRetryPolicy(quick), RandomSource.fixed(0.5), Instant::now,
                OutboxEvents.none())) {
            relay.start();
            Thread.sleep(500); // two attempts 5-10 ms apart would have parked the row many times over
            assertThat(store.find(id).orElseThrow().state()).as("untouched while down").isEqualTo(
                    OutboxEntry.State.PENDING);
            assertThat(store.find(id).orElseThrow().row().attempt()).as("no attempt used: still its first").isOne();
            down.refusing.clear();
            health.set("UP");
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (store.find(id).orElseThrow().state() != OutboxEntry.State.SENT && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
        }
        assertThat(store.find(id).orElseThrow().state()).as("relayed once the transport is up")
                .isEqualTo(OutboxEntry.State.SENT);
        assertThat(down.sent).hasSize(1);
    }
}
