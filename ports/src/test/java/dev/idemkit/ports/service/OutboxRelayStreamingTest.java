package dev.idemkit.ports.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.retry.RandomSource;
import dev.idemkit.ports.forwarding.ForwardingOutboxStore;
import dev.idemkit.ports.memory.InMemoryOutboxStore;
import dev.idemkit.ports.memory.PendingConfirmsTransport;
import dev.idemkit.ports.memory.PendingConfirmsTransport.Written;
import dev.idemkit.ports.out.OutboxEntry;
import dev.idemkit.ports.out.OutboxEvents;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.out.OutboxRelayStore;
import dev.idemkit.ports.out.OutboxRow;
import dev.idemkit.ports.out.RelayOutcome;
import dev.idemkit.ports.out.StoreUnavailableException;
import dev.idemkit.ports.out.TransportException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * A relay pass that goes on while it publishes (docs/ARCHITECTURE.md section 9): it asks the store for more rows as
 * its own run low, in one pass and one commit; a key's failure ends that key's run; a store that fails mid-pass stops
 * the writing and records nothing; a store with only the batch form still relays, one batch a pass.
 */
@org.junit.jupiter.api.Timeout(30)
class OutboxRelayStreamingTest {
    private final InMemoryOutboxStore store = new InMemoryOutboxStore();
    private final PendingConfirmsTransport transport = new PendingConfirmsTransport();
    private final Instant now = Instant.parse("2026-12-05T10:00:00Z");

    private OutboxRelay relay(OutboxRelayStore on, int batch) {
        return new OutboxRelay(on, transport, UnaryOperator.identity(), OutboxRelay.Settings.defaults().withBatch(batch)
                .withPollInterval(Duration.ofMillis(50)), RandomSource.fixed(0.5), () -> now, OutboxEvents.none());
    }

    private String append(String key, String body) {
        return store.append(OutboxMessage.of("events", key, body.getBytes(StandardCharsets.UTF_8)));
    }

    private OutboxEntry.State state(String id) {
        return store.find(id).orElseThrow().state();
    }

    /** Confirms every publish as it comes (failing those whose body is in {@code failing}) until the pass ends. */
    private List<String> answerAll(CompletableFuture<Integer> pass, String... failing) throws Exception {
        List<String> written = new ArrayList<>();
        while (!pass.isDone() || !transport.drained()) {
            Written w = transport.poll(20);
            if (w == null) {
                continue;
            }
            written.add(w.body());
            if (List.of(failing).contains(w.body())) {
                w.confirm().completeExceptionally(new TransportException("nacked"));
            } else {
                w.confirm().complete(null);
            }
        }
        return written;
    }

    /** The in-memory store, its pass seen through {@code wrap}, failing as a store whose commit fails at the end. */
    private OutboxRelayStore failingWith(java.util.function.UnaryOperator<OutboxRelayStore.Pass> wrap) {
        return new ForwardingOutboxStore(store) {
            @Override
            public int relay(int first, int max, Instant at, StreamingPublisher publisher) {
                delegate().relay(first, max, at, (runs, pass) -> {
                    publisher.publish(runs, wrap.apply(pass));
                    throw new StoreUnavailableException("connection lost", null); // as the store's commit would
                });
                return 0;
            }
        };
    }

    @Test
    void onePassAsksForMoreWhileItPublishesAndRelaysAKeysWholeBacklogInOrder() throws Exception {
        List<String> ids = new ArrayList<>();
        for (int i = 1; i <= 10; i++) {
            ids.add(append("a", "a" + i));
        }
        try (OutboxRelay relay = relay(store, 2)) {
            CompletableFuture<Integer> pass = CompletableFuture.supplyAsync(relay::relayOnce);
            List<String> written = answerAll(pass);
            assertThat(pass.get(5, TimeUnit.SECONDS)).as("one pass of hand-outs of 2").isEqualTo(10);
            assertThat(written).containsExactly("a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "a10");
        }
        assertThat(ids).allSatisfy(id -> assertThat(state(id)).isEqualTo(OutboxEntry.State.SENT));
    }

    @Test
    void aKeysFailureEndsItsRunWhileTheOtherKeysGoOn() throws Exception {
        List<String> a = new ArrayList<>();
        List<String> b = new ArrayList<>();
        for (int i = 1; i <= 6; i++) {
            a.add(append("a", "a" + i));
            b.add(append("b", "b" + i));
        }
        try (OutboxRelay relay = relay(store, 2)) {
            CompletableFuture<Integer> pass = CompletableFuture.supplyAsync(relay::relayOnce);
            List<String> written = answerAll(pass, "a2");
            pass.get(5, TimeUnit.SECONDS);
            assertThat(written).filteredOn(s -> s.startsWith("a")).containsExactly("a1", "a2");
            assertThat(written).filteredOn(s -> s.startsWith("b")).containsExactly("b1", "b2", "b3", "b4", "b5", "b6");
        }
        assertThat(state(a.get(0))).isEqualTo(OutboxEntry.State.SENT);
        assertThat(store.find(a.get(1)).orElseThrow().row().attempt()).as("a2 failed once, waits for its retry").isEqualTo(2);
        assertThat(a.subList(1, 6)).allSatisfy(id -> assertThat(state(id)).isEqualTo(OutboxEntry.State.PENDING));
        assertThat(b).allSatisfy(id -> assertThat(state(id)).isEqualTo(OutboxEntry.State.SENT));
    }

    @Test
    void aStoreThatFailsWhileThePassGoesOnStopsTheWritingAndRecordsNothing() throws Exception {
        List<String> ids = new ArrayList<>();
        for (int i = 1; i <= 6; i++) {
            ids.add(append("a", "a" + i));
        }
        OutboxRelayStore failing = failingWith(pass -> new OutboxRelayStore.Pass() {
            @Override
            public void more(Collection<String> keys, int rows, BiConsumer<List<List<OutboxRow>>, Throwable> answer) {
                answer.accept(null, new IllegalStateException("connection lost"));
            }

            @Override
            public void record(Map<String, RelayOutcome> outcomes) {
                pass.record(outcomes);
            }
        });
        try (OutboxRelay relay = relay(failing, 2)) {
            CompletableFuture<Integer> pass = CompletableFuture.supplyAsync(relay::relayOnce);
            List<String> written = answerAll(pass);
            assertThatThrownBy(() -> pass.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(StoreUnavailableException.class);
            // the ask comes as soon as a1 is written (the key runs low); a2 goes out only if a1's confirm came first
            assertThat(written).as("the first hand-out at most: nothing written after the failed ask")
                    .startsWith("a1").isSubsetOf("a1", "a2");
        }
        assertThat(ids).allSatisfy(id -> assertThat(state(id)).isEqualTo(OutboxEntry.State.PENDING));
        try (OutboxRelay relay = relay(store, 2)) {
            CompletableFuture<Integer> again = CompletableFuture.supplyAsync(relay::relayOnce);
            assertThat(answerAll(again)).as("published again with the same ids, in order")
                    .containsExactly("a1", "a2", "a3", "a4", "a5", "a6");
        }
    }

    /** A store that failed and cannot deliver its answer (a worker out of memory): the pass ends all the same. */
    @Test
    void aPassWhoseStoreFailedWithoutAnsweringStillEndsOnceItsPublishesAreAnswered() throws Exception {
        for (int i = 1; i <= 4; i++) {
            append("a", "a" + i);
        }
        java.util.concurrent.atomic.AtomicBoolean failed = new java.util.concurrent.atomic.AtomicBoolean();
        OutboxRelayStore silent = failingWith(pass -> new OutboxRelayStore.Pass() {
            @Override
            public void more(Collection<String> keys, int rows, BiConsumer<List<List<OutboxRow>>, Throwable> answer) {
                failed.set(true); // and the answer is lost
            }

            @Override
            public void record(Map<String, RelayOutcome> outcomes) {}

            @Override
            public boolean failed() {
                return failed.get();
            }
        });
        try (OutboxRelay relay = relay(silent, 2)) {
            CompletableFuture<Integer> pass = CompletableFuture.supplyAsync(relay::relayOnce);
            List<String> written = answerAll(pass);
            assertThatThrownBy(() -> pass.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(StoreUnavailableException.class);
            assertThat(written).startsWith("a1").isSubsetOf("a1", "a2");
        }
    }

    @Test
    void aStoreWithOnlyTheBatchFormRelaysOneBatchAPass() throws Exception {
        for (int i = 1; i <= 5; i++) {
            append("a", "a" + i);
        }
        OutboxRelayStore batchOnly = (max, at, publisher) -> store.relay(max, at, publisher);
        List<Integer> passes = new ArrayList<>();
        List<String> written = new ArrayList<>();
        try (OutboxRelay relay = relay(batchOnly, 2)) {
            for (int p = 0; p < 3; p++) {
                CompletableFuture<Integer> pass = CompletableFuture.supplyAsync(relay::relayOnce);
                written.addAll(answerAll(pass));
                passes.add(pass.get(5, TimeUnit.SECONDS));
            }
        }
        assertThat(passes).containsExactly(2, 2, 1);
        assertThat(written).containsExactly("a1", "a2", "a3", "a4", "a5");
    }
}
