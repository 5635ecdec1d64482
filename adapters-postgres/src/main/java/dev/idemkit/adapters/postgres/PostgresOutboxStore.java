package dev.idemkit.adapters.postgres;

import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.ports.out.OutboxEntry;
import dev.idemkit.ports.out.OutboxRow;
import dev.idemkit.ports.out.OutboxStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.sql.DataSource;

/**
 * The outbox on PostgreSQL table {@code outbox_messages} (appends: {@link PostgresOutbox}): the relay's hand-out here,
 * its wake-up in {@link OutboxListener}, the operators' actions in {@link PostgresParkedOutbox}, counts and retention in
 * {@link PostgresOutboxMaintenance}, the rows' reading in {@link OutboxRows}.
 *
 * <p>Atomic step, one pass in one transaction ({@link RelayPass}): {@link RelayPass#HEAD_SCAN} finds each key's oldest
 * unsent row, {@link RelayPass#LOCK_HEADS} locks those that are due ({@code FOR UPDATE SKIP LOCKED}), then
 * {@link RelayPass#FOLLOWERS} of the same keys; all held by this transaction while the publisher runs, which may ask
 * for more rows of the keys it holds, and of other keys, while it publishes; the outcomes are written in that same
 * transaction as they come, and committed when the publisher returns. Another relay skips the held heads, and the
 * rows after them are not heads for it, so a key is relayed by one relay at a time, in seq order (= commit order, see
 * {@link PostgresOutbox}). A parked row is unsent: the rows after it wait. Wake-up: {@code LISTEN} on the schema's
 * channel on a connection of its own, polling when that fails. Thread-safe.
 */
public final class PostgresOutboxStore implements OutboxStore {
    private final DataSource dataSource;
    private final Cursor cursor = new Cursor();
    /** The passes' workers: a pass's statements while it publishes run on one of these (daemon threads). */
    private final ExecutorService passWorkers = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "idemkit-outbox-pass");
        t.setDaemon(true);
        return t;
    });
    private final OutboxListener listener;
    private final PostgresParkedOutbox parked;
    private final PostgresOutboxMaintenance maintenance;

    /** Opens the connection that LISTENs; it stays open, outside the pool. */
    @FunctionalInterface
    public interface ListenConnection {
        Connection open() throws SQLException;
    }

    public PostgresOutboxStore(PostgresDatabase db) {
        this(db.dataSource(), db.schema(), db::openUnpooled);
    }

    /**
     * On a data source whose connections' search path reaches {@code outbox_messages} in {@code schema}; {@code listen}
     * opens the one connection that waits for commit notifications, which should not come from a pool (it is never
     * given back while the store is open).
     */
    public PostgresOutboxStore(DataSource dataSource, String schema, ListenConnection listen) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        String channel = PostgresOutbox.channel(Objects.requireNonNull(schema, "schema"));
        this.listener = new OutboxListener(channel, Objects.requireNonNull(listen, "listen"));
        this.parked = new PostgresParkedOutbox(dataSource, channel);
        this.maintenance = new PostgresOutboxMaintenance(dataSource);
    }

    @Override
    public void awaitAppend(Duration max) throws InterruptedException {
        listener.awaitAppend(max);
    }

    /** Releases the LISTEN connection. */
    public void close() {
        listener.close();
        passWorkers.shutdown();
    }

    @Override
    public List<OutboxEntry> parked(int max) {
        return parked.parked(max);
    }

    @Override
    public List<OutboxEntry> unsent(int max) {
        return parked.unsent(max);
    }

    @Override
    public Optional<OutboxEntry> find(String id) {
        return parked.find(id);
    }

    @Override
    public boolean redrive(String id, Approval approval) {
        return parked.redrive(id, approval);
    }

    @Override
    public boolean discard(String id, Approval approval) {
        return parked.discard(id, approval);
    }

    @Override
    public Stats stats(Instant now) {
        return maintenance.stats(now);
    }

    @Override
    public long purgeSent(Instant before, int batch, int maxBatches) {
        return maintenance.purgeSent(before, batch, maxBatches);
    }

    @Override
    public int relay(int max, Instant now, Publisher publisher) {
        Objects.requireNonNull(publisher, "publisher");
        // one batch: the heads and the rows behind them at once, since this publisher asks for nothing more
        return pass(max, max, now, true, (first, pass) -> pass.record(publisher.publish(first)));
    }

    /**
     * A pass that goes on while it publishes. Its first hand-out is the heads alone (two statements, not three, before
     * the first publish): the rows behind them come with the publisher's first ask, while the heads go out.
     */
    @Override
    public int relay(int first, int max, Instant now, StreamingPublisher publisher) {
        return pass(first, max, now, false, publisher);
    }

    private int pass(int first, int max, Instant now, boolean behindHeads, StreamingPublisher publisher) {
        if (first < 1 || max < first) {
            throw new IllegalArgumentException("a pass needs 1 <= first <= max, got " + first + " and " + max);
        }
        Objects.requireNonNull(now, "now");
        Objects.requireNonNull(publisher, "publisher");
        return Sql.inTransaction(dataSource, "outbox relay", c -> {
            RelayPass pass = new RelayPass(c, now, max, cursor);
            List<List<OutboxRow>> runs = pass.handOut(List.of(), first, behindHeads);
            if (runs.isEmpty()) {
                return 0;
            }
            pass.start(passWorkers);
            try {
                publisher.publish(runs, pass);
            } finally {
                pass.finish(); // the worker's failure, if any, wins: the pass must not commit
            }
            return pass.handed();
        });
    }

    /**
     * Where the next pass's scan of new keys starts (key order, wrapping round); per instance, a race on it is
     * harmless.
     */
    static final class Cursor {
        private volatile String key = "";

        String get() {
            return key;
        }

        void set(String k) {
            key = k;
        }
    }
}
