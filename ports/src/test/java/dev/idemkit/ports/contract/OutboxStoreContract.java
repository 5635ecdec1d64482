package dev.idemkit.ports.contract;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.out.OutboxEntry;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.out.OutboxRow;
import dev.idemkit.ports.out.OutboxStore;
import dev.idemkit.ports.out.RelayOutcome;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link OutboxStore} passes unchanged: only committed rows are handed out; per ordering key the
 * oldest unsent row first and, while one relay holds a key, no other relay gets any row of it; a failed row and the rows
 * behind it wait for its retry time; a parked row blocks its key until an approved redrive while other keys flow;
 * retention never deletes an unsent row.
 */
public abstract class OutboxStoreContract {

    /** A store on the outbox under test (a second call: another relay instance on the same outbox). */
    protected abstract OutboxStore newStore();

    /** Appends {@code message} in a unit of work that commits; returns its id. */
    protected abstract String appendCommitted(OutboxMessage message);

    /** Appends {@code message} in a unit of work that then rolls back. */
    protected abstract void appendRolledBack(OutboxMessage message);

    private static OutboxMessage message(String key, String body) {
        return OutboxMessage.of("contract.events", key, body.getBytes(StandardCharsets.UTF_8)).withHeaders(Map.of("k", key));
    }

    private String append(String key, String body) {
        return appendCommitted(message(key, body));
    }

    private static String body(OutboxRow r) {
        return new String(r.message().body(), StandardCharsets.UTF_8);
    }

    /** Answers Sent for every row, recording the runs it saw. */
    protected static final class Recording implements OutboxStore.Publisher {
        public final List<List<String>> runs = new ArrayList<>();

        @Override
        public Map<String, RelayOutcome> publish(List<List<OutboxRow>> handed) {
            Map<String, RelayOutcome> out = new HashMap<>();
            for (List<OutboxRow> run : handed) {
                runs.add(run.stream().map(OutboxStoreContract::body).toList());
                run.forEach(r -> out.put(r.id(), new RelayOutcome.Sent(Instant.now())));
            }
            return out;
        }
    }

    @Test
    void onlyCommittedRowsAreHandedOutWithTheirHeaders() {
        OutboxStore store = newStore();
        appendRolledBack(message("k", "gone"));
        String kept = append("k", "kept");
        assertThat(store.unsent(10)).extracting(e -> body(e.row())).containsExactly("kept");
        assertThat(store.find(kept).orElseThrow().row().headers()).containsEntry("k", "k");
        assertThat(store.find(UUID.randomUUID().toString())).isEmpty();
        assertThat(store.find("not an id")).isEmpty();
    }

    @Test
    void rowsOfAKeyAreHandedOutInCommitOrderAndOnlyOnceOnceSent() {
        OutboxStore store = newStore();
        append("a", "a1");
        append("b", "b1");
        append("a", "a2");
        append("a", "a3");
        Recording r = new Recording();

        assertThat(store.relay(100, Instant.now(), r)).isEqualTo(4);
        assertThat(r.runs).containsExactlyInAnyOrder(List.of("a1", "a2", "a3"), List.of("b1"));
        assertThat(store.relay(100, Instant.now(), new Recording())).isZero();
        assertThat(store.stats(Instant.now())).isEqualTo(new OutboxStore.Stats(0, 0, Optional.empty()));
    }

    @Test
    void aPassHandsOutAtMostItsBoundAndTheRestNextTime() {
        OutboxStore store = newStore();
        for (int i = 0; i < 5; i++) {
            append("a", "a" + i);
        }
        Recording first = new Recording();
        assertThat(store.relay(3, Instant.now(), first)).isEqualTo(3);
        assertThat(first.runs).containsExactly(List.of("a0", "a1", "a2"));
        Recording second = new Recording();
        assertThat(store.relay(3, Instant.now(), second)).isEqualTo(2);
        assertThat(second.runs).containsExactly(List.of("a3", "a4"));
    }

    @Test
    void aKeyHeldByOneRelayIsNotHandedToAnother() throws Exception {
        OutboxStore store = newStore();
        append("a", "a1");
        append("a", "a2");
        append("b", "b1");
        append("b", "b2");
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<List<String>> first = new ArrayList<>();
        CompletableFuture<Integer> relay1 = CompletableFuture.supplyAsync(() -> store.relay(1, Instant.now(), runs -> {
            runs.forEach(run -> first.add(run.stream().map(OutboxStoreContract::body).toList()));
            holding.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            Map<String, RelayOutcome> out = new HashMap<>();
            runs.forEach(run -> run.forEach(row -> out.put(row.id(), new RelayOutcome.Sent(Instant.now()))));
            return out;
        }));
        assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(first).as("one row: the head of a key").hasSize(1).first().asList().hasSize(1);
        String heldKey = first.get(0).get(0).substring(0, 1);
        String freeKey = heldKey.equals("a") ? "b" : "a";

        OutboxStore other = newStore();
        Recording second = new Recording();
        other.relay(100, Instant.now(), second);
        assertThat(second.runs).as("%s2 waits for %s1, held by the first relay", heldKey, heldKey)
                .containsExactly(List.of(freeKey + "1", freeKey + "2"));

        release.countDown();
        assertThat(relay1.get(10, TimeUnit.SECONDS)).isOne();
        Recording third = new Recording();
        other.relay(100, Instant.now(), third);
        assertThat(third.runs).containsExactly(List.of(heldKey + "2"));
    }

    /** The bodies of runs, one list per key. */
    private static List<List<String>> bodies(List<List<OutboxRow>> runs) {
        return runs.stream().map(run -> run.stream().map(OutboxStoreContract::body).toList()).toList();
    }

    /** Asks a streaming pass for more and waits for its answer. */
    private static List<List<OutboxRow>> more(OutboxStore.Pass pass, List<String> keys, int rows) {
        CompletableFuture<List<List<OutboxRow>>> answer = new CompletableFuture<>();
        pass.more(keys, rows, (runs, e) -> {
            if (e != null) {
                answer.completeExceptionally(e);
            } else {
                answer.complete(runs);
            }
        });
        try {
            return answer.get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("no answer from the pass", e);
        }
    }

    private static Map<String, RelayOutcome> sent(List<List<OutboxRow>> runs) {
        Map<String, RelayOutcome> out = new HashMap<>();
        runs.forEach(run -> run.forEach(r -> out.put(r.id(), new RelayOutcome.Sent(Instant.now()))));
        return out;
    }

    private static List<String> flat(List<List<OutboxRow>> runs) {
        return runs.stream().flatMap(List::stream).map(OutboxStoreContract::body).toList();
    }

    /**
     * A pass's first hand-out may hold the heads alone or the rows behind them too; what the pass gets in all, first
     * hand-out and asks together, is each key's rows in order.
     */
    @Test
    void aPassThatGoesOnHandsOutTheRowsCommittedMeanwhileForAKeyItHoldsAfterItsLastOneInOrder() {
        OutboxStore store = newStore();
        append("a", "a1");
        append("a", "a2");
        List<String> seen = new ArrayList<>();
        int handed = store.relay(10, 100, Instant.now(), (first, pass) -> {
            seen.addAll(flat(first));
            pass.record(sent(first));
            if (!seen.contains("a2")) {
                List<List<OutboxRow>> behind = more(pass, List.of("a"), 10);
                seen.addAll(flat(behind));
                pass.record(sent(behind));
            }
            append("a", "a3"); // committed while the pass holds a1 and a2
            append("a", "a4");
            List<List<OutboxRow>> next = more(pass, List.of("a"), 10);
            seen.addAll(flat(next));
            pass.record(sent(next));
            seen.addAll(flat(more(pass, List.of("a"), 10)));
        });
        assertThat(seen).containsExactly("a1", "a2", "a3", "a4");
        assertThat(handed).isEqualTo(4);
        assertThat(store.relay(100, Instant.now(), new Recording())).as("all four recorded sent").isZero();
    }

    /**
     * Asked for new keys again and again (nothing recorded, so every head it holds is still unsent and locked by its own
     * transaction, which its own lock does not skip), a pass never hands out a row twice nor a key another pass holds.
     */
    @Test
    void aPassThatGoesOnNeverHandsOutAKeyAnotherPassHoldsNorOneItHoldsAsNew() throws Exception {
        OutboxStore store = newStore();
        for (String k : List.of("a", "b", "c")) {
            append(k, k + "1");
            append(k, k + "2");
        }
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<String> firstPass = new ArrayList<>();
        CompletableFuture<Integer> relay1 = CompletableFuture.supplyAsync(() -> store.relay(1, 1, Instant.now(),
                (first, pass) -> {
                    firstPass.addAll(flat(first));
                    holding.countDown();
                    try {
                        release.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }));
        List<String> seen = new ArrayList<>();
        try {
            assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(firstPass).hasSize(1);
            String heldByOther = firstPass.get(0).substring(0, 1);
            newStore().relay(2, 100, Instant.now(), (first, pass) -> { // 2: its first scan meets the held key too
                seen.addAll(flat(first));
                for (int i = 0; i < 4; i++) {
                    seen.addAll(flat(more(pass, List.of(), 1)));
                }
                List<String> mine = seen.stream().map(b -> b.substring(0, 1)).distinct().toList();
                seen.addAll(flat(more(pass, mine, 10)));
            });
            assertThat(seen).as("held by the other pass: %s", heldByOther).doesNotHaveDuplicates()
                    .noneMatch(b -> b.startsWith(heldByOther)).hasSize(4);
        } finally {
            release.countDown();
        }
        assertThat(relay1.get(10, TimeUnit.SECONDS)).isOne();
    }

    @Test
    void aPassThatGoesOnHandsOutNoMoreThanItsBoundAndNothingMoreOfAKeyWhoseRowFailed() {
        OutboxStore store = newStore();
        for (int i = 1; i <= 6; i++) {
            append("a", "a" + i);
        }
        List<String> seen = new ArrayList<>();
        int handed = store.relay(2, 5, Instant.now(), (first, pass) -> {
            seen.addAll(flat(first));
            seen.addAll(flat(more(pass, List.of("a"), 10)));
            seen.addAll(flat(more(pass, List.of("a"), 10)));
            pass.record(Map.of());
        });
        assertThat(seen).containsExactly("a1", "a2", "a3", "a4", "a5");
        assertThat(handed).isEqualTo(5);

        // a1 fails: nothing after it is handed out in that pass, asked for or not, nor before its retry time
        Instant now = Instant.now();
        List<String> next = new ArrayList<>();
        store.relay(1, 100, now, (first, pass) -> {
            next.addAll(flat(first));
            pass.record(Map.of(first.get(0).get(0).id(), new RelayOutcome.Failed(new AttemptRecord(1, now, "away"),
                    now.plus(Duration.ofHours(1)))));
            next.addAll(flat(more(pass, List.of("a"), 10)));
        });
        assertThat(next).containsExactly("a1");
        List<String> later = new ArrayList<>();
        int none = store.relay(1, 100, now.plusSeconds(1), (first, pass) -> later.addAll(flat(first)));
        assertThat(none).isZero();
        assertThat(later).isEmpty();
    }

    @Test
    void anOutcomeRecordedTwiceInAPassCountsOnceAndOneOfAnotherPassesRowNotAtAll() {
        OutboxStore store = newStore();
        String a1 = append("a", "a1");
        String b1 = append("b", "b1");
        Instant now = Instant.now();
        store.relay(10, 10, now, (first, pass) -> {
            RelayOutcome failed = new RelayOutcome.Failed(new AttemptRecord(1, now, "away"), now.plusSeconds(1));
            List<String> ids = first.stream().flatMap(List::stream).map(OutboxRow::id).toList();
            assertThat(ids).contains(a1);
            pass.record(Map.of(a1, failed));
            pass.record(Map.of(a1, failed));
            pass.record(Map.of(UUID.randomUUID().toString(), new RelayOutcome.Sent(now)));
            pass.record(Map.of(b1, new RelayOutcome.Sent(now)));
        });
        assertThat(store.find(a1).orElseThrow().row().attempt()).as("one failure, one attempt").isEqualTo(2);
        assertThat(store.find(a1).orElseThrow().row().failures()).hasSize(1);
        assertThat(store.find(b1).orElseThrow().state()).isEqualTo(OutboxEntry.State.SENT);
    }

    @Test
    void outcomesRecordedWhileAPassGoesOnCountOnlyOnceItEndsAndNotAtAllIfItsPublisherFails() {
        OutboxStore store = newStore();
        String a1 = append("a", "a1");
        String b1 = append("b", "b1");
        OutboxStore other = newStore();
        List<OutboxEntry.State> during = new ArrayList<>();
        store.relay(10, 10, Instant.now(), (first, pass) -> {
            pass.record(sent(first));
            more(pass, List.of(), 10); // the outcome is written before this answer
            during.add(other.find(a1).orElseThrow().state());
        });
        assertThat(during).as("not committed while the pass went on").containsExactly(OutboxEntry.State.PENDING);
        assertThat(other.find(a1).orElseThrow().state()).isEqualTo(OutboxEntry.State.SENT);

        String b2 = append("b", "b2");
        try {
            store.relay(10, 10, Instant.now(), (first, pass) -> {
                pass.record(sent(first));
                more(pass, List.of(), 10);
                throw new IllegalStateException("the publisher failed after recording");
            });
        } catch (RuntimeException expected) {
            // the pass failed: nothing of it recorded
        }
        assertThat(other.find(b1).orElseThrow().state()).isEqualTo(OutboxEntry.State.SENT);
        assertThat(other.find(b2).orElseThrow().state()).isEqualTo(OutboxEntry.State.PENDING);
        Recording again = new Recording();
        other.relay(10, Instant.now(), again);
        assertThat(again.runs).containsExactly(List.of("b2"));
    }

    @Test
    void aFailedRowWaitsForItsRetryTimeAndTheRowsAfterItWaitWithIt() {
        OutboxStore store = newStore();
        String a1 = append("a", "a1");
        append("a", "a2");
        Instant now = Instant.now();
        store.relay(100, now, runs -> Map.of(a1, new RelayOutcome.Failed(new AttemptRecord(1, now, "broker away"),
                now.plus(Duration.ofHours(1)))));
        append("b", "b1");

        Recording early = new Recording();
        store.relay(100, now.plusSeconds(60), early);
        assertThat(early.runs).as("a1 is not due, a2 waits behind it").containsExactly(List.of("b1"));

        Recording due = new Recording();
        store.relay(100, now.plus(Duration.ofHours(2)), due);
        assertThat(due.runs).containsExactly(List.of("a1", "a2"));
        OutboxEntry sent = store.find(a1).orElseThrow();
        assertThat(sent.state()).isEqualTo(OutboxEntry.State.SENT);
        assertThat(sent.row().failures()).extracting(AttemptRecord::error).containsExactly("broker away");
    }

    @Test
    void rowsThePublisherAnsweredNothingForStayAsTheyWere() {
        OutboxStore store = newStore();
        append("a", "a1");
        store.relay(100, Instant.now(), runs -> Map.of());
        Recording again = new Recording();
        store.relay(100, Instant.now(), again);
        assertThat(again.runs).containsExactly(List.of("a1"));
    }

    @Test
    void aParkedRowBlocksItsKeyUntilAnApprovedRedriveWhileOtherKeysFlow() {
        OutboxStore store = newStore();
        String poison = append("p", "p1");
        append("p", "p2");
        Instant now = Instant.now();
        store.relay(100, now, runs -> Map.of(poison, new RelayOutcome.Parked(new AttemptRecord(3, now, "refused"),
                "gave up after 3 attempts: refused")));
        append("q", "q1");

        Recording meanwhile = new Recording();
        store.relay(100, now.plus(Duration.ofDays(1)), meanwhile);
        assertThat(meanwhile.runs).containsExactly(List.of("q1"));
        assertThat(store.parked(10)).singleElement().satisfies(e -> {
            assertThat(e.row().id()).isEqualTo(poison);
            assertThat(e.state()).isEqualTo(OutboxEntry.State.PARKED);
            assertThat(e.parkReason()).contains("gave up after 3 attempts: refused");
        });
        OutboxStore.Stats stats = store.stats(now.plusSeconds(10));
        assertThat(stats.parked()).isOne();
        assertThat(stats.pending()).as("p2, waiting behind the parked row").isOne();

        assertThat(store.redrive(UUID.randomUUID().toString(), new Approval("ana", "why", now))).isFalse();
        assertThat(store.redrive("not-a-uuid", new Approval("ana", "why", now))).isFalse();
        assertThat(store.redrive(poison, new Approval("ana", "queue fixed", now))).isTrue();
        assertThat(store.redrive(poison, new Approval("ana", "twice", now))).as("no longer parked").isFalse();

        List<OutboxRow> handed = new ArrayList<>();
        store.relay(100, now, runs -> {
            Map<String, RelayOutcome> out = new HashMap<>();
            runs.forEach(run -> run.forEach(row -> {
                handed.add(row);
                out.put(row.id(), new RelayOutcome.Sent(Instant.now()));
            }));
            return out;
        });
        assertThat(handed).extracting(OutboxStoreContract::body).containsExactly("p1", "p2");
        assertThat(handed.get(0).attempt()).as("a redrive starts the attempts again").isOne();
        assertThat(handed.get(0).failures()).hasSize(1);
        assertThat(store.find(poison).orElseThrow().redrive()).hasValueSatisfying(
                r -> assertThat(r).contains("ana").contains("queue fixed"));
    }

    @Test
    void aDiscardedParkedRowIsNeverPublishedAndLetsItsKeyGoOn() {
        OutboxStore store = newStore();
        String poison = append("p", "p1");
        String behind = append("p", "p2");
        Instant now = Instant.now();
        assertThat(store.discard(poison, new Approval("ana", "pending, not parked", now))).isFalse();
        store.relay(100, now, runs -> Map.of(poison, new RelayOutcome.Parked(new AttemptRecord(1, now, "refused"),
                "refused for good")));
        assertThat(store.discard(behind, new Approval("ana", "not parked", now))).isFalse();
        assertThat(store.discard(poison, new Approval("ana", "no broker takes it", now))).isTrue();
        assertThat(store.discard(poison, new Approval("ana", "twice", now))).isFalse();

        Recording r = new Recording();
        store.relay(100, now, r);
        assertThat(r.runs).containsExactly(List.of("p2"));
        OutboxEntry discarded = store.find(poison).orElseThrow();
        assertThat(discarded.state()).isEqualTo(OutboxEntry.State.DISCARDED);
        assertThat(discarded.parkReason()).contains("refused for good");
        assertThat(discarded.redrive()).hasValueSatisfying(t -> assertThat(t).contains("ana").contains("no broker takes it"));
        assertThat(store.parked(10)).isEmpty();
        assertThat(store.stats(now).parked()).isZero();
    }

    @Test
    void keysThatCannotGoOutNowNeverFillAPassNorHideTheKeysAfterThem() {
        OutboxStore store = newStore();
        Instant now = Instant.now();
        for (int i = 0; i < 30; i++) {
            String key = String.format("a%02d", i);
            String id = append(key, key + "-1");
            append(key, key + "-2");
            boolean park = i % 2 == 0;
            store.relay(100, now, runs -> Map.of(id, park
                    ? new RelayOutcome.Parked(new AttemptRecord(1, now, "refused"), "refused")
                    : new RelayOutcome.Failed(new AttemptRecord(1, now, "away"), now.plus(Duration.ofHours(1)))));
        }
        append("z", "z1");
        Recording r = new Recording();
        store.relay(5, now, r); // five rows a pass, thirty keys before z that cannot go out now
        assertThat(r.runs).as("in ONE pass, not one pass per poll interval").containsExactly(List.of("z1"));
    }

    @Test
    void anyErrorTextIsRecordedWithItsFailure() {
        OutboxStore store = newStore();
        String id = append("k", "k1");
        Instant now = Instant.now();
        String hostile = "broker said \u0000 and " + "x".repeat(10_000);
        store.relay(100, now, runs -> Map.of(id, new RelayOutcome.Failed(new AttemptRecord(1, now, hostile),
                now.plusSeconds(1))));
        OutboxEntry e = store.find(id).orElseThrow();
        assertThat(e.row().failures()).as("the failure is recorded, not the pass rolled back").singleElement()
                .satisfies(f -> assertThat(f.error()).startsWith("broker said "));
        assertThat(e.nextAttemptAt()).hasValueSatisfying(t -> assertThat(Duration.between(t, now.plusSeconds(1)).abs())
                .isLessThan(Duration.ofMillis(1)));
    }

    @Test
    void retentionDeletesSentRowsInBatchesAndNeverAnUnsentOne() {
        OutboxStore store = newStore();
        for (int i = 0; i < 25; i++) {
            append("k" + i, "m" + i);
        }
        store.relay(20, Instant.now(), new Recording());
        assertThat(store.purgeSent(Instant.now().plusSeconds(1), 5, 2)).as("two batches of 5").isEqualTo(10);
        assertThat(store.purgeSent(Instant.now().plusSeconds(1), 5, 100)).isEqualTo(10);
        assertThat(store.unsent(100)).hasSize(5);
        assertThat(store.stats(Instant.now()).pending()).isEqualTo(5);
    }
}
