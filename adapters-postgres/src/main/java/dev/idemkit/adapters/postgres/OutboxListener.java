package dev.idemkit.adapters.postgres;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Objects;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The relay's wake-up: {@code LISTEN} on the schema's outbox channel, on a connection of its own that stays open
 * outside the pool; polling while that fails (logged once, and once when it works again). Thread-safe: one waiter at
 * a time.
 */
final class OutboxListener {
    private static final Logger LOG = LoggerFactory.getLogger(OutboxListener.class);

    private final String channel;
    private final PostgresOutboxStore.ListenConnection listenConnection;
    private final Object listening = new Object();
    private Connection listener;
    private boolean listenFailedLogged;

    OutboxListener(String channel, PostgresOutboxStore.ListenConnection listenConnection) {
        this.channel = Objects.requireNonNull(channel, "channel");
        this.listenConnection = Objects.requireNonNull(listenConnection, "listenConnection");
    }

    /**
     * The longest single read of the LISTEN connection: pgjdbc's timed wait for notifications does not end when its
     * thread is interrupted, so the wait is cut into slices of this, and an interrupt (the relay's close) ends it
     * within one.
     */
    static final long SLICE_MILLIS = 100;

    /**
     * Waits for a notification on the channel or {@code max}, whichever comes first; returns at once when it has just
     * (re)opened the LISTEN connection, since what was committed before that notified nobody.
     *
     * @throws InterruptedException when the thread is interrupted (within {@link #SLICE_MILLIS}): a stop, not a failure
     */
    void awaitAppend(Duration max) throws InterruptedException {
        long millis = Math.max(1, Math.min(max.toMillis(), Integer.MAX_VALUE));
        long deadline = System.nanoTime() + millis * 1_000_000;
        synchronized (listening) {
            try {
                boolean opening = listener == null || listener.isClosed();
                PGConnection pg = listen();
                if (opening) {
                    // a commit between the caller's last pass and this LISTEN sent its notification to nobody: one
                    // more pass finds it, and from here on every commit notifies
                    return;
                }
                for (long left = millis; left > 0; left = (deadline - System.nanoTime()) / 1_000_000) {
                    if (Thread.interrupted()) {
                        throw new InterruptedException("interrupted while waiting for an outbox notification");
                    }
                    PGNotification[] got = pg.getNotifications((int) Math.min(left, SLICE_MILLIS));
                    if (got != null && got.length > 0) {
                        LOG.debug("outbox woken by {} notification(s)", got.length);
                        break;
                    }
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException("interrupted while waiting for an outbox notification");
                }
                return;
            } catch (SQLException e) {
                closeListener(); // its state is unknown after a failed read
                if (Thread.interrupted()) {
                    // pgjdbc reports a connect or read cut short by an interrupt as "Something unusual has occurred",
                    // and sets the thread's interrupt flag again: a stop, not a failed LISTEN
                    throw new InterruptedException("interrupted while waiting for an outbox notification");
                }
                if (!listenFailedLogged) {
                    LOG.warn("outbox LISTEN on {} failed ({}); polling every {} ms until it works again", channel,
                            e.getMessage(), millis);
                    listenFailedLogged = true;
                }
            }
        }
        Thread.sleep(millis);
    }

    private PGConnection listen() throws SQLException {
        if (listener == null || listener.isClosed()) {
            Connection c = listenConnection.open();
            try {
                c.setAutoCommit(true);
                try (Statement s = c.createStatement()) {
                    s.execute("LISTEN \"" + channel.replace("\"", "\"\"") + "\"");
                }
                listener = c;
                if (listenFailedLogged) {
                    LOG.info("outbox LISTEN on {} works again", channel);
                    listenFailedLogged = false;
                }
            } catch (SQLException | RuntimeException e) {
                c.close();
                throw e;
            }
        }
        return listener.unwrap(PGConnection.class);
    }

    private void closeListener() {
        if (listener != null) {
            try {
                listener.close();
            } catch (SQLException ignored) {
                // broken already
            }
            listener = null;
        }
    }

    /** Releases the LISTEN connection. */
    void close() {
        synchronized (listening) {
            closeListener();
        }
    }
}
