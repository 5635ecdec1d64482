package dev.idemkit.adapters.postgres;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Retention for idemkit's three tables, the one loop that {@code serve} and the Spring starter both schedule: inbox
 * keys older than the dedup window, Idempotency-Key records past their expiry (completion + the protocol's TTL, on the
 * database's clock) and outbox rows sent longer ago than a day (by default). Unsent outbox rows and keys inside the
 * window are never touched.
 *
 * <p>Writers never wait on it: every batch is its own short transaction of one statement that takes the oldest rows
 * through the age index, skips rows another transaction holds ({@code FOR UPDATE SKIP LOCKED}) and deletes by row
 * address, and the loop pauses after each batch ({@link Policy#pauseAfter}: at least {@link Policy#pause()}, and long
 * enough that the purge works at most {@link Policy#dutyCycle()} of the time), so that a backlog of a million keys is
 * worked off beside the writers instead of ahead of them. A run goes on until every table is caught up with the cutoffs it
 * computed when it began (a service that outgrew the schedule catches up in one run), or until its caller says stop.
 * Thread-safe; runs from several instances at once are safe (they skip each other's rows).
 */
public final class PostgresRetention {
    private static final Logger LOG = LoggerFactory.getLogger(PostgresRetention.class);

    /**
     * The oldest keys first, through the index on {@code processed_at}, locked (a row another transaction holds is
     * left for the next batch), then deleted by their row addresses; run under {@link Sql#PURGE_PLANNER}. The age is
     * checked again on the rows deleted: a row address is unique only within one table, and in a table an operator
     * partitioned by age the same address can name a live key in another partition. Written as {@code IS TRUE} so
     * that it stays a filter on those rows instead of a second scan of the age index.
     */
    static final String PURGE_PROCESSED = """
            DELETE FROM processed_messages
            WHERE ctid = ANY (ARRAY(
                SELECT ctid FROM processed_messages
                WHERE processed_at < ?
                ORDER BY processed_at
                LIMIT ?
                FOR UPDATE SKIP LOCKED))
              AND (processed_at < ?) IS TRUE
            """;

    /**
     * Idempotency-Key records expired before a cutoff the run read once from the database's clock (a cutoff that moved
     * with every batch, as {@link PostgresIdempotencyRecords#PURGE}'s does, could keep a run in this table for as long
     * as records expire faster than it deletes them, and the other tables would wait); the same shape otherwise.
     */
    static final String PURGE_EXPIRED_RECORDS = """
            DELETE FROM idempotency_records
            WHERE ctid = ANY (ARRAY(
                SELECT ctid FROM idempotency_records
                WHERE expires_at <= ?
                ORDER BY expires_at
                LIMIT ?
                FOR UPDATE SKIP LOCKED))
              AND (expires_at <= ?) IS TRUE
            """;

    /** The database's clock: every cutoff of a run, and the ages it reports, are read from it. */
    static final String DATABASE_NOW = "SELECT statement_timestamp()";
    /** The oldest key kept, the first entry of the age index, and the database's time. */
    static final String OLDEST_PROCESSED = "SELECT min(processed_at), statement_timestamp() FROM processed_messages";
    /** The oldest sent outbox row kept, from the partial index on sent rows. */
    static final String OLDEST_SENT = "SELECT min(sent_at) FROM outbox_messages WHERE sent_at IS NOT NULL";

    /**
     * What retention keeps and how fast it deletes.
     *
     * @param inbox      how long an inbox key is kept (the dedup window: a message redelivered later runs again)
     * @param sentOutbox how long a sent outbox row is kept for an operator's look
     * @param batchSize  rows per batch (one short transaction), 1 to 100,000
     * @param pause      the shortest pause after a batch; zero for none
     * @param dutyCycle  the largest share of the time the purge keeps the database working, in (0, 1]: after a batch
     *                   that took {@code t}, it pauses at least {@code t * (1 - dutyCycle) / dutyCycle}, so a slow
     *                   (contended) batch slows the purge, not the writers; 1 for no such pause
     */
    public record Policy(Duration inbox, Duration sentOutbox, int batchSize, Duration pause, double dutyCycle) {
        /** The inbox's default dedup window. */
        public static final Duration DEFAULT_INBOX = Duration.ofDays(7);
        /** How long a sent outbox row is kept by default. */
        public static final Duration DEFAULT_SENT_OUTBOX = Duration.ofDays(1);
        /** Rows per batch by default. */
        public static final int DEFAULT_BATCH_SIZE = 1000;
        /** The shortest pause after each batch by default. */
        public static final Duration DEFAULT_PAUSE = Duration.ofMillis(10);
        /**
         * The default duty cycle: working a tenth of the time, the purge of a million keys left the writers beside it
         * at 0.9x or more of their rate without it, and still deleted about 10,000 keys a second on this 2-core
         * machine (RetentionBenchmark, benchmarks/BENCHMARKS.md; at 0.2, WAL-bound batched writers fell to 0.82x).
         */
        public static final double DEFAULT_DUTY_CYCLE = 0.1;

        public Policy {
            require(inbox, "inbox");
            require(sentOutbox, "sentOutbox");
            require(pause, "pause");
            if (batchSize < 1 || batchSize > 100_000) {
                throw new IllegalArgumentException("retention batch size must be 1 to 100000, got " + batchSize);
            }
            if (!(dutyCycle > 0 && dutyCycle <= 1)) {
                throw new IllegalArgumentException("retention duty cycle must be in (0, 1], got " + dutyCycle);
            }
        }

        private static void require(Duration d, String name) {
            Objects.requireNonNull(d, name);
            if (d.isNegative()) {
                throw new IllegalArgumentException("retention " + name + " must not be negative, got " + d);
            }
        }

        /** 7 days of inbox keys, a day of sent outbox rows, batches of 1000, at least 10 ms between them, duty 0.1. */
        public static Policy defaults() {
            return new Policy(DEFAULT_INBOX, DEFAULT_SENT_OUTBOX, DEFAULT_BATCH_SIZE, DEFAULT_PAUSE, DEFAULT_DUTY_CYCLE);
        }

        public Policy withInbox(Duration d) {
            return new Policy(d, sentOutbox, batchSize, pause, dutyCycle);
        }

        public Policy withSentOutbox(Duration d) {
            return new Policy(inbox, d, batchSize, pause, dutyCycle);
        }

        public Policy withBatchSize(int n) {
            return new Policy(inbox, sentOutbox, n, pause, dutyCycle);
        }

        public Policy withPause(Duration d) {
            return new Policy(inbox, sentOutbox, batchSize, d, dutyCycle);
        }

        public Policy withDutyCycle(double share) {
            return new Policy(inbox, sentOutbox, batchSize, pause, share);
        }

        /** The pause after a batch that took {@code batch}. */
        Duration pauseAfter(Duration batch) {
            Duration paced = dutyCycle >= 1 ? Duration.ZERO
                    : Duration.ofNanos(Math.round(batch.toNanos() * (1 - dutyCycle) / dutyCycle));
            return paced.compareTo(pause) > 0 ? paced : pause;
        }
    }

    /**
     * What one run deleted, per table, and whether it caught up (false when its caller stopped it first, or it was
     * interrupted).
     */
    public record Report(long processedMessages, long idempotencyRecords, long sentOutbox, boolean caughtUp) {
        public long total() {
            return processedMessages + idempotencyRecords + sentOutbox;
        }

        @Override
        public String toString() {
            return "deleted " + processedMessages + " inbox keys, " + idempotencyRecords
                    + " expired Idempotency-Key records, " + sentOutbox + " sent outbox rows"
                    + (caughtUp ? "" : " (stopped before catching up)");
        }
    }

    /**
     * The oldest row each table keeps (how far back the inbox's dedup window reaches, and the sent outbox's), read at
     * {@code readAt} on the database's clock.
     */
    public record Oldest(Optional<Instant> processedMessage, Optional<Instant> sentOutbox, Instant readAt) {
        public Oldest {
            Objects.requireNonNull(processedMessage, "processedMessage");
            Objects.requireNonNull(sentOutbox, "sentOutbox");
            Objects.requireNonNull(readAt, "readAt");
        }

        /** The oldest inbox key's age when it was read; zero for an empty inbox. */
        public Duration inboxAge() {
            return processedMessage.map(t -> Duration.between(t, readAt)).filter(d -> !d.isNegative())
                    .orElse(Duration.ZERO);
        }
    }

    private final DataSource dataSource;

    public PostgresRetention(DataSource dataSource) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    public PostgresRetention(PostgresDatabase db) {
        this(Objects.requireNonNull(db, "db").dataSource());
    }

    /**
     * Deletes everything due now under {@code policy}, batch after batch with the policy's pause between, until every
     * table is caught up with the cutoffs read once when the run began, from the database's clock (the clock the rows'
     * times were written by), or until {@code keepGoing} answers false (asked before each batch). An interrupt stops it
     * too (the flag is kept). A database failure ends the run with a {@link
     * dev.idemkit.ports.out.StoreUnavailableException}; what was deleted before it stays deleted.
     */
    public Report purge(Policy policy, BooleanSupplier keepGoing) {
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(keepGoing, "keepGoing");
        Instant now = databaseNow();
        Instant inboxCutoff = now.minus(policy.inbox());
        Instant sentCutoff = now.minus(policy.sentOutbox());
        Loop loop = new Loop(policy, keepGoing);
        long processed = loop.run(n -> purgeProcessedBatch(inboxCutoff, n));
        long records = loop.run(n -> Sql.purgeBatch(dataSource, "idempotency purge", PURGE_EXPIRED_RECORDS, ps -> {
            Sql.setInstant(ps, 1, now);
            ps.setInt(2, n);
            Sql.setInstant(ps, 3, now);
        }));
        long sent = loop.run(n -> PostgresOutboxMaintenance.purgeSentBatch(dataSource, sentCutoff, n));
        Report report = new Report(processed, records, sent, !loop.stopped);
        if (report.total() > 0 || !report.caughtUp()) {
            LOG.info("retention {} (inbox window {}, sent outbox kept {})", report, policy.inbox(), policy.sentOutbox());
        }
        return report;
    }

    /** The oldest inbox key and sent outbox row kept (each one read of an index's first entry), and when. */
    public Oldest oldest() {
        return Sql.inTransaction(dataSource, "retention oldest", c -> {
            Optional<Instant> key;
            Optional<Instant> sent;
            Instant at;
            try (PreparedStatement ps = c.prepareStatement(OLDEST_PROCESSED); ResultSet rs = ps.executeQuery()) {
                rs.next();
                key = Optional.ofNullable(Sql.instant(rs, 1));
                at = Sql.instant(rs, 2);
            }
            try (PreparedStatement ps = c.prepareStatement(OLDEST_SENT); ResultSet rs = ps.executeQuery()) {
                rs.next();
                sent = Optional.ofNullable(Sql.instant(rs, 1));
            }
            return new Oldest(key, sent, at);
        });
    }

    private Instant databaseNow() {
        return Sql.inTransaction(dataSource, "retention clock", c -> {
            try (PreparedStatement ps = c.prepareStatement(DATABASE_NOW); ResultSet rs = ps.executeQuery()) {
                rs.next();
                return Sql.instant(rs, 1);
            }
        });
    }

    /** Deletes up to {@code batchSize} inbox keys processed before {@code cutoff}; returns how many. */
    public int purgeProcessedBatch(Instant cutoff, int batchSize) {
        return Sql.purgeBatch(dataSource, "inbox retention", PURGE_PROCESSED, ps -> {
            Sql.setInstant(ps, 1, cutoff);
            ps.setInt(2, batchSize);
            Sql.setInstant(ps, 3, cutoff);
        });
    }

    /** One table's batches. */
    @FunctionalInterface
    private interface Batch {
        int delete(int batchSize);
    }

    /** Batches with the pause between them, for each table in turn, until a short batch or a stop. */
    private static final class Loop {
        private final Policy policy;
        private final BooleanSupplier keepGoing;
        private boolean stopped;

        Loop(Policy policy, BooleanSupplier keepGoing) {
            this.policy = policy;
            this.keepGoing = keepGoing;
        }

        long run(Batch batch) {
            long total = 0;
            while (!stopped) {
                if (!keepGoing.getAsBoolean() || Thread.currentThread().isInterrupted()) {
                    stopped = true;
                    break;
                }
                long began = System.nanoTime();
                int n = batch.delete(policy.batchSize());
                total += n;
                if (n < policy.batchSize()) {
                    break;
                }
                pause(policy.pauseAfter(Duration.ofNanos(System.nanoTime() - began)));
            }
            return total;
        }

        private void pause(Duration d) {
            if (d.isZero()) {
                return;
            }
            try {
                Thread.sleep(d.toMillis(), d.toNanosPart() % 1_000_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                stopped = true;
            }
        }
    }
}
