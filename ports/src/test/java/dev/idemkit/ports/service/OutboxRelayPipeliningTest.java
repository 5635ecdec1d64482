package dev.idemkit.ports.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.retry.RandomSource;
import dev.idemkit.ports.memory.InMemoryOutboxStore;
import dev.idemkit.ports.memory.PendingConfirmsTransport;
import dev.idemkit.ports.memory.PendingConfirmsTransport.Written;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutboxEntry;
import dev.idemkit.ports.out.OutboxEvents;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.TransportException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The relay on a pipelining transport (docs/ARCHITECTURE.md section 9): what is in flight at once, per key and over keys,
 * and what becomes of the rows of a key behind a publish that fails while they are in flight. The transport here only
 * records each publish and hands its confirm to the test, which answers in the order it chooses.
 */
class OutboxRelayPipeliningTest {
    private final InMemoryOutboxStore store = new InMemoryOutboxStore();
    private final PendingConfirmsTransport transport = new PendingConfirmsTransport();
    private final Instant now = Instant.parse("2026-12-04T10:00:00Z");

    private OutboxRelay relay(int keyWindow) {
        return new OutboxRelay(store, transport, UnaryOperator.identity(), OutboxRelay.Settings.defaults()
                .withKeyWindow(keyWindow).withPollInterval(Duration.ofMillis(50)), RandomSource.fixed(0.5), () -> now,
                OutboxEvents.none());
    }

    private String append(String key, String body) {
        return store.append(OutboxMessage.of("events", key, body.getBytes(StandardCharsets.UTF_8)));
    }

    /** Runs one pass on a thread of its own, so that the test can answer the confirms meanwhile. */
    private CompletableFuture<Integer> pass(OutboxRelay relay) {
        return CompletableFuture.supplyAsync(relay::relayOnce);
    }

    private OutboxEntry.State state(String id) {
        return store.find(id).orElseThrow().state();
    }

    @Test
    void everyKeysHeadIsInFlightAtOnceAndAKeysNextRowWaitsForTheConfirmBeforeIt() throws Exception {
        String a1 = append("a", "a1");
        String a2 = append("a", "a2");
        String b1 = append("b", "b1");
        try (OutboxRelay relay = relay(1)) {
            CompletableFuture<Integer> pass = pass(relay);
            List<Written> heads = List.of(transport.next(), transport.next());
            assertThat(heads).extracting(Written::body).containsExactlyInAnyOrder("a1", "b1");
            assertThat(transport.quietFor(200)).as("a2 waits for a1's confirm").isTrue();
            Written first = heads.get(0).body().equals("a1") ? heads.get(0) : heads.get(1);
            first.confirm().complete(null);
            Written second = transport.next();
            assertThat(second.body()).isEqualTo("a2");
            assertThat(pass).as("the pass waits for every confirm").isNotDone();
            second.confirm().complete(null);
            (heads.get(0) == first ? heads.get(1) : heads.get(0)).confirm().complete(null);
            assertThat(pass.get(5, TimeUnit.SECONDS)).isEqualTo(3);
        }
        assertThat(List.of(a1, a2, b1)).allSatisfy(id -> assertThat(state(id)).isEqualTo(OutboxEntry.State.SENT));
    }

    /**
     * The decision for a key's rows behind a failure: those already in flight are not marked sent, even when the broker
     * confirmed them; they are handed out again after the failed row (same ids), so the consumer gets the key's rows in
     * order after the failed one's retry (its inbox applied the early copies and absorbs these). Nothing more of the key
     * is written once a failure is known.
     */
    @Test
    void behindAFailureTheKeysRowsAlreadyInFlightAreHandedOutAgainAfterItAndNoMoreAreWritten() throws Exception {
        List<String> ids = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            ids.add(append("k", "k" + i));
        }
        try (OutboxRelay relay = relay(3)) {
            CompletableFuture<Integer> pass = pass(relay);
            Written k1 = transport.next();
            Written k2 = transport.next();
            Written k3 = transport.next();
            assertThat(List.of(k1.body(), k2.body(), k3.body())).containsExactly("k1", "k2", "k3");
            assertThat(transport.quietFor(200)).as("the window is 3").isTrue();
            k2.confirm().completeExceptionally(new TransportException("the broker nacked the publish"));
            k3.confirm().complete(null); // behind the failure, confirmed: it reached the queue
            assertThat(transport.quietFor(200)).as("nothing more of the key after a failure").isTrue();
            assertThat(pass).as("k1 is still in flight").isNotDone();
            k1.confirm().complete(null);
            assertThat(pass.get(5, TimeUnit.SECONDS)).isEqualTo(5);
        }
        assertThat(state(ids.get(0))).isEqualTo(OutboxEntry.State.SENT);
        OutboxEntry failed = store.find(ids.get(1)).orElseThrow();
        assertThat(failed.state()).isEqualTo(OutboxEntry.State.PENDING);
        assertThat(failed.row().failures()).singleElement().satisfies(f -> assertThat(f.error()).contains("nacked"));
        assertThat(store.find(ids.get(2)).orElseThrow().row().failures()).as("k3 confirmed behind the failure").isEmpty();
        assertThat(ids.subList(2, 5)).allSatisfy(id -> assertThat(state(id)).isEqualTo(OutboxEntry.State.PENDING));
    }

    @Test
    void aPublishThatThrowsBeforeWritingIsTheRowsFailureAndTheOtherKeysGoOn() throws Exception {
        MessageTransport throwing = new PendingConfirmsTransport() {
            @Override
            public CompletableFuture<Void> publishAsync(String queue, OutgoingMessage message) {
                if (new String(message.body(), StandardCharsets.UTF_8).equals("bad")) {
                    throw new TransportException("cannot open a publishing channel");
                }
                return CompletableFuture.completedFuture(null);
            }
        };
        String bad = append("a", "bad");
        String behind = append("a", "behind");
        String other = append("b", "other");
        try (OutboxRelay relay = new OutboxRelay(store, throwing, UnaryOperator.identity(), OutboxRelay.Settings.defaults(),
                RandomSource.fixed(0.5), () -> now, OutboxEvents.none())) {
            assertThat(relay.relayOnce()).isEqualTo(3);
        }
        assertThat(store.find(bad).orElseThrow().row().failures()).singleElement()
                .satisfies(f -> assertThat(f.error()).contains("cannot open a publishing channel"));
        assertThat(state(behind)).isEqualTo(OutboxEntry.State.PENDING);
        assertThat(state(other)).isEqualTo(OutboxEntry.State.SENT);
    }

    @Test
    void atMostParallelismKeysAreInFlightAtOnce() throws Exception {
        for (int i = 0; i < 5; i++) {
            append("key-" + i, "m" + i);
        }
        try (OutboxRelay relay = new OutboxRelay(store, transport, UnaryOperator.identity(), OutboxRelay.Settings.defaults()
                .withParallelism(2), RandomSource.fixed(0.5), () -> now, OutboxEvents.none())) {
            CompletableFuture<Integer> pass = pass(relay);
            List<Written> first = List.of(transport.next(), transport.next());
            assertThat(transport.quietFor(200)).as("two keys at once").isTrue();
            first.forEach(w -> w.confirm().complete(null));
            for (int i = 0; i < 3; i++) {
                transport.next().confirm().complete(null);
            }
            assertThat(pass.get(5, TimeUnit.SECONDS)).isEqualTo(5);
        }
        assertThat(store.stats(now).pending()).isZero();
    }
}
