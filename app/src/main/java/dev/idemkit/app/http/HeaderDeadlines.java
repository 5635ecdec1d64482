package dev.idemkit.app.http;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.util.component.AbstractLifeCycle;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drops a connection whose request headers do not arrive within a bound. Jetty's idle timeout restarts with every
 * byte, so a client sending one byte a second would keep a connection (never a worker: Jetty parses headers without
 * one) for as long as it likes; this bound is total. It runs from the connection's opening for its first request,
 * and from the first byte after the previous response on a kept-alive connection (a connection silent between
 * requests is the idle timeout's). Checked every quarter of the bound (at most a second), so a connection is dropped
 * between 1 and 1.25 bounds (plus one second at most) after its wait began.
 */
final class HeaderDeadlines extends AbstractLifeCycle implements Connection.Listener {
    private static final Logger LOG = LoggerFactory.getLogger(HeaderDeadlines.class);

    private final long boundNanos;
    private final long everyMillis;
    private final Scheduler scheduler;
    private final Map<Connection, Wait> waits = new ConcurrentHashMap<>();

    /** Where one connection is: answering a request, or waiting for one since {@code since} (-1: not yet seen). */
    private static final class Wait {
        boolean handling;
        long bytesAtLastAnswer;
        long since;

        Wait(long openedAt) {
            since = openedAt;
        }
    }

    HeaderDeadlines(Duration bound, Scheduler scheduler) {
        this.boundNanos = bound.toNanos();
        this.everyMillis = Math.max(50, Math.min(1_000, bound.toMillis() / 4));
        this.scheduler = scheduler;
    }

    /** Started with the connector, after the server's scheduler. */
    @Override
    protected void doStart() {
        schedule();
    }

    private void schedule() {
        scheduler.schedule(() -> {
            try {
                sweep(System.nanoTime());
            } catch (RuntimeException e) {
                LOG.warn("header deadline check failed: {}", e.toString());
            } finally {
                if (isRunning()) {
                    schedule();
                }
            }
        }, everyMillis, TimeUnit.MILLISECONDS);
    }

    @Override
    public void onOpened(Connection connection) {
        waits.put(connection, new Wait(System.nanoTime()));
    }

    @Override
    public void onClosed(Connection connection) {
        waits.remove(connection);
    }

    /** The request's headers arrived: the body's bound ({@link WholeRequests}) and the handler take over. */
    void headersArrived(Connection connection) {
        Wait w = waits.get(connection);
        if (w != null) {
            synchronized (w) {
                w.handling = true;
            }
        }
    }

    /** The response is out: the next request's wait begins with its first byte. */
    void answered(Connection connection) {
        Wait w = waits.get(connection);
        if (w != null) {
            synchronized (w) {
                w.handling = false;
                w.bytesAtLastAnswer = connection.getBytesIn();
                w.since = -1;
            }
        }
    }

    private void sweep(long now) {
        waits.forEach((connection, w) -> {
            boolean late;
            synchronized (w) {
                if (w.handling) {
                    return;
                }
                if (w.since == -1 && connection.getBytesIn() > w.bytesAtLastAnswer) {
                    w.since = now; // the next request has begun
                }
                late = w.since != -1 && now - w.since > boundNanos;
            }
            if (late) {
                LOG.debug("request headers not complete within {} ms: closing {}", boundNanos / 1_000_000,
                        connection.getEndPoint().getRemoteSocketAddress());
                connection.getEndPoint().close();
            }
        });
    }
}
