package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.out.OutboxEntry;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.out.OutboxRow;
import dev.idemkit.ports.out.RelayOutcome;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The outbox on PostgreSQL: appends commit with the effect, the relay's hand-out holds keys, keeps order, retries and parks. */
class PostgresOutboxIT {
    private static TestDatabase pg;
    private static PostgresOutbox outbox;
    private PostgresOutboxStore store;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start();
        outbox = new PostgresOutbox(pg.db());
        pg.execute("CREATE TABLE outbox_it_effects (id text NOT NULL)");
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    @BeforeEach
    void fresh() {
        pg.execute("DELETE FROM outbox_messages");
        pg.execute("DELETE FROM outbox_it_effects");
        store = new PostgresOutboxStore(pg.db());
    }

    @AfterEach
    void closeStore() {
        store.close();
    }

    private static OutboxMessage message(String key, String body) {
        return OutboxMessage.of("it.events", key, body.getBytes(StandardCharsets.UTF_8)).withHeaders(Map.of("k", key));
    }

    private static String append(String key, String body) {
        return pg.db().inTransaction(work -> outbox.append(work, message(key, body)));
    }

    private static String body(OutboxRow r) {
        return new String(r.message().body(), StandardCharsets.UTF_8);
    }

    /** A publisher that answers Sent for every row, recording what it saw. */
    private static final class Recording implements PostgresOutboxStore.Publisher {
        final List<List<String>> runs = new ArrayList<>();

        @Override
        public Map<String, RelayOutcome> publish(List<List<OutboxRow>> handed) {
            Map<String, RelayOutcome> out = new HashMap<>();
            for (List<OutboxRow> run : handed) {
                runs.add(run.stream().map(PostgresOutboxIT::body).toList());
                run.forEach(r -> out.put(r.id(), new RelayOutcome.Sent(Instant.now())));
            }
            return out;
        }
    }

    @Test
    void theMessageCommitsWithTheEffectAndRollsBackWithIt() {
        pg.db().inTransaction(work -> {
            try (var ps = work.connection().prepareStatement("INSERT INTO outbox_it_effects VALUES ('kept')")) {
                ps.executeUpdate();
            }
            return outbox.append(work, message("k", "kept"));
        });
        assertThatThrownBy(() -> pg.db().inTransaction(work -> {
            try (var ps = work.connection().prepareStatement("INSERT INTO outbox_it_effects VALUES ('gone')")) {
                ps.executeUpdate();
            }
            outbox.append(work, message("k", "gone"));
            throw new IllegalStateException("the effect failed after its append");
        })).hasMessageContaining("the effect failed");

        assertThat(pg.queryLong("SELECT count(*) FROM outbox_it_effects")).isOne();
        assertThat(store.unsent(10)).extracting(e -> body(e.row())).containsExactly("kept");
        assertThat(store.unsent(10).get(0).row().headers()).containsEntry("k", "k");
    }

    @Test
    void aCallerOwnedJdbcTransactionDecidesAndAnAutoCommitConnectionIsRefused() throws Exception {
        try (Connection c = pg.connection()) {
            outbox.append(c, message("k", "rolled back"));
            c.rollback();
            String id = outbox.append(c, message("k", "committed"));
            c.commit();
            assertThat(store.find(id)).map(e -> body(e.row())).contains("committed");
            c.setAutoCommit(true);
            assertThatThrownBy(() -> outbox.append(c, message("k", "alone")))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("auto-commit");
            c.setAutoCommit(false);
        }
        assertThat(store.unsent(10)).extracting(e -> body(e.row())).containsExactly("committed");
    }

    @Test
    void rowsOfAKeyAreHandedOutInCommitOrderAndMarkedSentOnce() {
        append("a", "a1");
        append("b", "b1");
        append("a", "a2");
        append("a", "a3");
        Recording r = new Recording();

        assertThat(store.relay(100, Instant.now(), r)).isEqualTo(4);
        assertThat(r.runs).containsExactlyInAnyOrder(List.of("a1", "a2", "a3"), List.of("b1"));
        assertThat(store.relay(100, Instant.now(), new Recording())).isZero();
        assertThat(store.stats(Instant.now())).isEqualTo(new PostgresOutboxStore.Stats(0, 0, java.util.Optional.empty()));
    }

    @Test
    void aKeyHeldByOneRelayIsNotHandedToAnother() throws Exception {
        append("held", "h1");
        append("held", "h2");
        append("free", "f1");
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<List<String>> first = new ArrayList<>();
        CompletableFuture<Integer> relay1 = CompletableFuture.supplyAsync(() -> store.relay(1, Instant.now(), runs -> {
            runs.forEach(run -> first.add(run.stream().map(PostgresOutboxIT::body).toList()));
            holding.countDown();
            await(release);
            Map<String, RelayOutcome> out = new HashMap<>();
            runs.forEach(run -> run.forEach(row -> out.put(row.id(), new RelayOutcome.Sent(Instant.now()))));
            return out;
        }));
        assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(first).containsExactly(List.of("h1"));

        Recording second = new Recording();
        PostgresOutboxStore other = new PostgresOutboxStore(pg.db());
        other.relay(100, Instant.now(), second);
        assertThat(second.runs).as("h2 waits for h1, held by the first relay").containsExactly(List.of("f1"));

        release.countDown();
        assertThat(relay1.get(10, TimeUnit.SECONDS)).isOne();
        Recording third = new Recording();
        other.relay(100, Instant.now(), third);
        assertThat(third.runs).containsExactly(List.of("h2"));
        other.close();
    }

    @Test
    void aFailedRowWaitsForItsRetryTimeAndTheRowsAfterItWaitWithIt() {
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
    void aParkedRowBlocksItsKeyUntilRedrivenWhileOtherKeysFlow() {
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
        PostgresOutboxStore.Stats stats = store.stats(now.plusSeconds(10));
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
        assertThat(handed).extracting(PostgresOutboxIT::body).containsExactly("p1", "p2");
        assertThat(handed.get(0).attempt()).as("a redrive starts the attempts again").isOne();
        assertThat(handed.get(0).failures()).hasSize(1);
        assertThat(store.find(poison).orElseThrow().redrive()).hasValueSatisfying(
                r -> assertThat(r).contains("ana").contains("queue fixed"));
    }

    @Test
    void retentionDeletesSentRowsInBatchesAndNeverAnUnsentOne() {
        for (int i = 0; i < 25; i++) {
            append("k" + i, "m" + i);
        }
        store.relay(20, Instant.now(), new Recording());
        assertThat(store.purgeSent(Instant.now().plusSeconds(1), 5, 2)).as("two batches of 5").isEqualTo(10);
        assertThat(store.purgeSent(Instant.now().plusSeconds(1), 5, 100)).isEqualTo(10);
        assertThat(pg.queryLong("SELECT count(*) FROM outbox_messages")).as("the 5 unsent stay").isEqualTo(5);
        assertThat(store.stats(Instant.now()).pending()).isEqualTo(5);
    }

    @Test
    void aCommitWakesAWaitingRelayLongBeforeItsPollInterval() throws Exception {
        store.awaitAppend(Duration.ofMillis(10)); // LISTEN is in place from here on
        CompletableFuture<Long> waited = CompletableFuture.supplyAsync(() -> {
            long t0 = System.nanoTime();
            try {
                store.awaitAppend(Duration.ofSeconds(60));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            return (System.nanoTime() - t0) / 1_000_000;
        });
        Thread.sleep(200);
        append("wake", "w1");
        assertThat(waited.get(30, TimeUnit.SECONDS)).as("woken by the commit, not by the 60 s poll").isLessThan(30_000);
    }

    private static void await(CountDownLatch l) {
        try {
            l.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
