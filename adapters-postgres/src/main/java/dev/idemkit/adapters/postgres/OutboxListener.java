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

    /** Waits for a notification on the channel or {@code max}, whichever comes first. */
    void awaitAppend(Duration max) throws InterruptedException {
        long millis = Math.max(1, Math.min(max.toMillis(), Integer.MAX_VALUE));
        synchronized (listening) {
            try {
                PGConnection pg = listen();
                PGNotification[] got = pg.getNotifications((int) millis);
                if (got != null && got.length > 0) {
                    LOG.debug("outbox woken by {} notification(s)", got.length);
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                return;
            } catch (SQLException e) {
                if (!listenFailedLogged) {
                    LOG.warn("outbox LISTEN on {} failed ({}); polling every {} ms until it works again", channel,
                            e.getMessage(), millis);
                    listenFailedLogged = true;
                }
                closeListener();
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
