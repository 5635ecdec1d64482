package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.inbox.InboxKey;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Retention's one loop ({@link PostgresRetention#purge}): every table caught up in one run, batch after batch; what is
 * inside its window, unsent or not yet expired stays; a stop between batches is reported; a row a writer holds is
 * skipped, not waited for; the oldest rows kept are read back. Each case has a schema of its own.
 */
class PostgresRetentionIT {
    private static final PostgresRetention.Policy SMALL_BATCHES = PostgresRetention.Policy.defaults().withBatchSize(10)
            .withPause(Duration.ZERO);
    private TestDatabase pg;
    private PostgresRetention retention;

    @BeforeEach
    void start() {
        pg = TestDatabase.start();
        retention = new PostgresRetention(pg.db());
    }

    @AfterEach
    void stop() {
        pg.close();
    }

    @Test
    void oneRunCatchesUpEveryTableAndKeepsWhatIsInsideItsWindow() {
        PostgresInboxStore inbox = new PostgresInboxStore(pg.db());
        String consumer = "retention-" + UUID.randomUUID();
        for (int i = 0; i < 25; i++) {
            inbox.runOnce(InboxKey.of(consumer, "m-" + i), Fingerprint.of("b"), w -> null);
        }
        pg.execute("UPDATE processed_messages SET processed_at = now() - interval '8 days' WHERE message_id <> 'm-0'");
        pg.execute("INSERT INTO idempotency_records (client_id, idem_key, fingerprint, state, created_at, expires_at)"
                + " SELECT 'c', 'k-' || g, 'f', 'in_progress', now() - interval '2 days',"
                + " CASE WHEN g <= 23 THEN now() - interval '1 hour' ELSE now() + interval '1 hour' END"
                + " FROM generate_series(1, 24) g");
        pg.execute("INSERT INTO outbox_messages (id, destination, ordering_key, headers, body, sent_at)"
                + " SELECT gen_random_uuid(), 'd', 'k', '{}', '\\x00', CASE WHEN g <= 21 THEN now() - interval '2 days'"
                + " WHEN g = 22 THEN now() - interval '1 hour' END FROM generate_series(1, 23) g");
        pg.execute("UPDATE outbox_messages SET appended_at = now() - interval '30 days' WHERE sent_at IS NULL");

        PostgresRetention.Report report = retention.purge(SMALL_BATCHES, () -> true);

        assertThat(report).isEqualTo(new PostgresRetention.Report(24, 23, 21, true));
        assertThat(inbox.recorded(InboxKey.of(consumer, "m-0"))).as("inside the 7-day window").isPresent();
        assertThat(pg.queryLong("SELECT count(*) FROM processed_messages")).isOne();
        assertThat(pg.queryLong("SELECT count(*) FROM idempotency_records")).as("not yet expired").isOne();
        assertThat(pg.queryLong("SELECT count(*) FROM outbox_messages WHERE sent_at IS NULL"))
                .as("an unsent row, however old, is never retention's").isOne();
        assertThat(pg.queryLong("SELECT count(*) FROM outbox_messages WHERE sent_at IS NOT NULL"))
                .as("sent an hour ago: kept a day").isOne();
        assertThat(retention.purge(SMALL_BATCHES, () -> true))
                .isEqualTo(new PostgresRetention.Report(0, 0, 0, true));
    }

    @Test
    void aStopBetweenBatchesEndsTheRunAndSaysItDidNotCatchUp() {
        oldKeys(35);
        AtomicInteger asked = new AtomicInteger();

        PostgresRetention.Report report = retention.purge(SMALL_BATCHES, () -> asked.incrementAndGet() <= 2);

        assertThat(report).isEqualTo(new PostgresRetention.Report(20, 0, 0, false));
        assertThat(report.toString()).contains("stopped before catching up");
        assertThat(pg.queryLong("SELECT count(*) FROM processed_messages")).isEqualTo(15);
    }

    @Test
    void anInterruptedRunStopsAfterItsBatchAndKeepsTheFlag() {
        oldKeys(35);
        Thread.currentThread().interrupt();
        try {
            PostgresRetention.Report report = retention.purge(SMALL_BATCHES, () -> true);
            assertThat(report.caughtUp()).isFalse();
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(pg.queryLong("SELECT count(*) FROM processed_messages")).isEqualTo(35);
    }

    @Test
    @org.junit.jupiter.api.Timeout(60) // a purge that waited for the writer would hang here, not fail
    void aKeyAWriterHoldsIsSkippedNotWaitedFor() throws Exception {
        oldKeys(5);
        try (Connection writer = pg.connection(); Statement s = writer.createStatement()) {
            writer.setAutoCommit(false);
            s.execute("SELECT 1 FROM processed_messages WHERE message_id = 'old-3' FOR UPDATE");

            PostgresRetention.Report report = retention.purge(SMALL_BATCHES, () -> true);

            assertThat(report.processedMessages()).isEqualTo(4);
            writer.rollback();
        }
        assertThat(retention.purge(SMALL_BATCHES, () -> true).processedMessages())
                .as("the next run takes it").isOne();
    }

    @Test
    void theOldestRowsKeptAreReadFromTheAgeIndexes() {
        PostgresRetention.Oldest empty = retention.oldest();
        assertThat(empty.processedMessage()).isEmpty();
        assertThat(empty.sentOutbox()).isEmpty();
        assertThat(empty.inboxAge()).isZero();
        oldKeys(3);
        pg.execute("UPDATE processed_messages SET processed_at = '2026-01-02T03:04:05Z' WHERE message_id = 'old-2'");
        pg.execute("INSERT INTO outbox_messages (id, destination, ordering_key, headers, body, sent_at) VALUES"
                + " (gen_random_uuid(), 'd', 'k', '{}', '\\x00', '2026-02-03T04:05:06Z'),"
                + " (gen_random_uuid(), 'd', 'k', '{}', '\\x00', NULL)");

        PostgresRetention.Oldest oldest = retention.oldest();

        assertThat(oldest.processedMessage()).contains(Instant.parse("2026-01-02T03:04:05Z"));
        assertThat(oldest.sentOutbox()).contains(Instant.parse("2026-02-03T04:05:06Z"));
        assertThat(new PostgresRetention.Oldest(oldest.processedMessage(), oldest.sentOutbox(),
                Instant.parse("2026-01-03T03:04:05Z")).inboxAge()).isEqualTo(Duration.ofDays(1));
        assertThat(Duration.between(oldest.readAt(), Instant.now()).abs()).as("read on the database's clock, now")
                .isLessThan(Duration.ofMinutes(1));
    }

    @Test
    void aPolicyOutsideItsBoundsIsRefusedSayingWhich() {
        PostgresRetention.Policy p = PostgresRetention.Policy.defaults();
        assertThat(p).isEqualTo(new PostgresRetention.Policy(Duration.ofDays(7), Duration.ofDays(1), 1000,
                Duration.ofMillis(10), 0.1));
        assertThatThrownBy(() -> p.withDutyCycle(0)).hasMessageContaining("duty cycle must be in (0, 1], got 0.0");
        assertThatThrownBy(() -> p.withDutyCycle(1.5)).hasMessageContaining("duty cycle must be in (0, 1], got 1.5");
        assertThatThrownBy(() -> p.withBatchSize(0)).hasMessageContaining("batch size must be 1 to 100000, got 0");
        assertThatThrownBy(() -> p.withInbox(Duration.ofSeconds(-1))).hasMessageContaining("inbox must not be negative");
        assertThatThrownBy(() -> p.withPause(null)).hasMessageContaining("pause");
    }

    /** A batch that took 10 ms is followed by 90 ms at a duty cycle of 0.1, never less than the pause. */
    @Test
    void theDutyCycleStretchesThePauseAfterASlowBatch() {
        PostgresRetention.Policy p = PostgresRetention.Policy.defaults();
        assertThat(p.pauseAfter(Duration.ofMillis(10))).isEqualTo(Duration.ofMillis(90));
        assertThat(p.pauseAfter(Duration.ofMillis(1))).as("the floor").isEqualTo(Duration.ofMillis(10));
        assertThat(p.withDutyCycle(1).withPause(Duration.ZERO).pauseAfter(Duration.ofMillis(10))).isZero();
        assertThat(p.withDutyCycle(0.5).pauseAfter(Duration.ofMillis(30))).isEqualTo(Duration.ofMillis(30));
    }

    /**
     * The records' cutoff is read once per run: records that expire while a run works are the next run's, so a run
     * ends even when records expire faster than it deletes them (before, its cutoff moved with every batch).
     */
    @Test
    void recordsThatExpireDuringARunAreLeftToTheNextOne() {
        pg.execute("INSERT INTO idempotency_records (client_id, idem_key, fingerprint, state, created_at, expires_at)"
                + " SELECT 'c', 'k-' || g, 'f', 'in_progress', now(), clock_timestamp() + interval '1500 milliseconds'"
                + " FROM generate_series(1, 30) g");
        pg.execute("INSERT INTO idempotency_records (client_id, idem_key, fingerprint, state, created_at, expires_at)"
                + " SELECT 'c', 'old-' || g, 'f', 'in_progress', now(), now() - interval '1 hour'"
                + " FROM generate_series(1, 25) g");
        // pauses long enough that the 30 expire while the run works through the 25 (its third batch begins after 2 s)
        PostgresRetention.Report report = retention.purge(SMALL_BATCHES.withPause(Duration.ofSeconds(1)), () -> true);

        assertThat(report.idempotencyRecords()).isEqualTo(25);
        assertThat(pg.queryLong("SELECT count(*) FROM idempotency_records")).isEqualTo(30);
        assertThat(retention.purge(SMALL_BATCHES, () -> true).idempotencyRecords()).as("the next run").isEqualTo(30);
    }

    private void oldKeys(int n) {
        pg.execute("INSERT INTO processed_messages (consumer, message_id, fingerprint, processed_at)"
                + " SELECT 'c', 'old-' || g, 'f', now() - interval '30 days' FROM generate_series(1, " + n + ") g");
    }
}
