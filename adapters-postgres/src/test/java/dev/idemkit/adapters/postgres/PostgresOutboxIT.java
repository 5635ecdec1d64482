package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.out.OutboxRow;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The outbox on PostgreSQL beyond the contract ({@link PostgresOutboxStoreContractIT}): appends commit and roll back with
 * the effect, in idemkit's unit of work or the caller's JDBC transaction (never in auto-commit), and a commit wakes a
 * waiting relay.
 */
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

    /**
     * In idemkit's unit of work the row is written with the commit (in its round trip when it is the only one): so
     * while the effect runs its key's lock is free for other appenders; after the commit the rows are there, in append
     * order within a key.
     */
    @Test
    void anAppendInTheUnitOfWorkIsWrittenWithTheCommitAndTakesItsKeysLockOnlyThen() throws Exception {
        List<Boolean> lockFree = new java.util.ArrayList<>();
        List<String> ids = pg.db().inTransaction(work -> {
            String one = outbox.append(work, message("k", "one"));
            lockFree.add(tryLock("k"));
            String two = outbox.append(work, message("k", "two"));
            String three = outbox.append(work, message("j", "three"));
            return List.of(one, two, three);
        });
        assertThat(lockFree).as("the key's append lock is not held while the effect runs").containsExactly(true);
        assertThat(store.unsent(10)).extracting(e -> body(e.row())).containsExactlyInAnyOrder("one", "two", "three");
        assertThat(ids).allSatisfy(id -> assertThat(store.find(id)).isPresent());
        assertThat(runs()).as("within a key, append order").contains(List.of("one", "two"));
    }

    /**
     * A statement the effect runs after an append has the row written first: rolled back to a savepoint taken before
     * it, the row goes too; an append written at once after it ({@code appendAll}) comes after it in its key.
     */
    @Test
    void aStatementAfterAnAppendHasItWrittenFirstSoASavepointAndTheKeysOrderHold() {
        pg.db().inTransaction(work -> {
            java.sql.Savepoint sp = work.connection().setSavepoint();
            outbox.append(work, message("s", "undone"));
            work.connection().rollback(sp);
            outbox.append(work, message("k", "first"));
            outbox.appendAll(work, List.of(message("k", "second"), message("j", "other")));
            outbox.append(work, message("k", "third"));
            return null;
        });
        assertThat(store.unsent(10)).extracting(e -> body(e.row())).containsExactlyInAnyOrder("first", "second", "other",
                "third");
        assertThat(runs()).contains(List.of("first", "second", "third"));
    }

    private static boolean tryLock(String key) throws java.sql.SQLException {
        try (Connection other = pg.connection(); var ps = other.prepareStatement(
                "SELECT pg_try_advisory_xact_lock(?, hashtext(?))")) {
            ps.setInt(1, PostgresOutbox.LOCK_SPACE);
            ps.setString(2, key);
            try (var rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            } finally {
                other.rollback();
            }
        }
    }

    private List<List<String>> runs() {
        List<List<String>> runs = new java.util.ArrayList<>();
        store.relay(10, java.time.Instant.now(), handed -> {
            handed.forEach(run -> runs.add(run.stream().map(PostgresOutboxIT::body).toList()));
            return Map.of();
        });
        return runs;
    }

    /** A row that cannot be written at the commit fails the commit: the effect is not kept either. */
    @Test
    void anAppendThatFailsAtTheCommitTakesTheEffectWithIt() {
        assertThatThrownBy(() -> pg.db().inTransaction(work -> {
            try (var ps = work.connection().prepareStatement("INSERT INTO outbox_it_effects VALUES ('effect')")) {
                ps.executeUpdate();
            }
            try (var ps = work.connection().prepareStatement("ALTER TABLE outbox_messages RENAME TO outbox_messages_away")) {
                ps.executeUpdate(); // the row's insert at the commit will find no table
            }
            outbox.append(work, message("k", "never")); // the effect's last step: written with the commit
            return null;
        })).isInstanceOf(dev.idemkit.ports.out.StoreUnavailableException.class);
        assertThat(pg.queryLong("SELECT count(*) FROM outbox_it_effects")).isZero();
        assertThat(pg.queryLong("SELECT count(*) FROM outbox_messages")).as("the rename rolled back too").isZero();
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


    /**
     * LISTEN starts with the first wait, after the relay's first pass: a row committed in between notified nobody. The
     * wait that opened LISTEN returns at once, so the next pass finds such a row (before, it waited its poll interval).
     */
    @Test
    void theWaitThatStartsListeningReturnsAtOnceSoThatAPassFindsWhatWasCommittedBefore() throws Exception {
        PostgresOutboxStore fresh = new PostgresOutboxStore(pg.db());
        try {
            long t0 = System.nanoTime();
            fresh.awaitAppend(Duration.ofSeconds(30));
            assertThat((System.nanoTime() - t0) / 1_000_000).as("returned at once, not after 30 s").isLessThan(10_000);
        } finally {
            fresh.close();
        }
    }

    /**
     * The relay's close() interrupts a loop waiting here: that is a stop, not a failed LISTEN. Before, pgjdbc's interrupted
     * read surfaced as "Something unusual has occurred" and every relay close logged a WARN that LISTEN had failed.
     */
    @Test
    void anInterruptedWaitEndsAtOnceWithoutAWarningAndTheNextWaitIsStillWokenByACommit() throws Exception {
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> log =
                new ch.qos.logback.core.read.ListAppender<>();
        log.start();
        ch.qos.logback.classic.Logger listenerLog =
                (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(OutboxListener.class);
        listenerLog.addAppender(log);
        try {
            store.awaitAppend(Duration.ofMillis(10)); // LISTEN is in place from here on
            java.util.concurrent.atomic.AtomicReference<Throwable> ended = new java.util.concurrent.atomic.AtomicReference<>();
            Thread waiter = new Thread(() -> {
                try {
                    store.awaitAppend(Duration.ofSeconds(60));
                    ended.set(new AssertionError("returned normally"));
                } catch (Throwable e) {
                    ended.set(e);
                }
            });
            waiter.start();
            Thread.sleep(300); // waiting in the LISTEN connection's read
            long t0 = System.nanoTime();
            waiter.interrupt();
            waiter.join(10_000);
            assertThat(waiter.isAlive()).as("the interrupted wait ended").isFalse();
            assertThat((System.nanoTime() - t0) / 1_000_000).as("at once, not after its 60 s").isLessThan(5_000);
            assertThat(ended.get()).isInstanceOf(InterruptedException.class);
            assertThat(log.list).as("nothing at WARN or above").noneMatch(e -> e.getLevel().isGreaterOrEqual(
                    ch.qos.logback.classic.Level.WARN));
            aCommitWakesAWaitingRelayLongBeforeItsPollInterval();
        } finally {
            listenerLog.detachAppender(log);
        }
    }

    @Test
    void theWaitingListenerTakesNoConnectionFromThePool() throws Exception {
        // a pool of two (Flyway needs two to start), one of them held by another unit of work all along
        try (TestDatabase one = TestDatabase.start(2); Connection busy = one.db().dataSource().getConnection()) {
            PostgresOutboxStore listening = new PostgresOutboxStore(one.db());
            PostgresOutbox appender = new PostgresOutbox(one.db());
            CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> {
                try {
                    listening.awaitAppend(Duration.ofMillis(10)); // opens LISTEN (and returns at once)
                    listening.awaitAppend(Duration.ofSeconds(20));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            Thread.sleep(300); // LISTEN in place, waiting
            String id = CompletableFuture.supplyAsync(() -> one.db().inTransaction(w -> appender.append(w,
                    message("k", "one connection left")))).get(10, TimeUnit.SECONDS);
            assertThat(listening.find(id)).isPresent();
            waiting.get(20, TimeUnit.SECONDS);
            listening.close();
        }
    }

    /**
     * Keys whose locks collide (hashtext gives acct-173184 and acct-269912 one value, acct-210215 and acct-285192
     * another): in key order, one unit of work takes lock 1 then 2 and the other 2 then 1. appendAll takes them all at
     * once, in lock order: never a deadlock.
     */
    @Test
    void appendAllNeverDeadlocksEvenOnKeysWhoseLocksCollide() throws Exception {
        assertThat(pg.queryLong("SELECT count(DISTINCT hashtext(k)) FROM unnest(ARRAY['acct-173184', 'acct-269912',"
                + " 'acct-210215', 'acct-285192']) k")).as("two pairs of colliding locks").isEqualTo(2);
        List<OutboxMessage> one = List.of(message("acct-173184", "1"), message("acct-285192", "2"));
        List<OutboxMessage> other = List.of(message("acct-210215", "3"), message("acct-269912", "4"));
        java.util.concurrent.ExecutorService two = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            for (int i = 0; i < 100; i++) {
                java.util.concurrent.CyclicBarrier go = new java.util.concurrent.CyclicBarrier(2);
                var a = two.submit(() -> pg.db().inTransaction(w -> {
                    go.await();
                    return outbox.appendAll(w, one);
                }));
                var b = two.submit(() -> pg.db().inTransaction(w -> {
                    go.await();
                    return outbox.appendAll(w, other);
                }));
                assertThat(a.get(30, TimeUnit.SECONDS)).hasSize(2);
                assertThat(b.get(30, TimeUnit.SECONDS)).hasSize(2);
            }
        } finally {
            two.shutdownNow();
        }
        assertThat(store.unsent(1000)).hasSize(400);
    }
}
