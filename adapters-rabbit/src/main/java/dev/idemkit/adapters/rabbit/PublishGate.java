package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.BlockedListener;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmListener;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Recoverable;
import com.rabbitmq.client.RecoveryListener;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the broker lets one connection publish. During a resource alarm (memory or disk) RabbitMQ stops reading what
 * a publishing connection sends and says so with {@code connection.blocked}; {@code connection.unblocked} ends it. A
 * publish written meanwhile is neither refused nor confirmed: it waits in the socket and reaches its queue after the
 * alarm. So a confirm timeout is no evidence of loss while the connection is blocked, and a publish tried again then
 * is a second copy later (docs/ARCHITECTURE.md section 12, "A resource alarm").
 *
 * <p>The broker tells a connection it is blocked only once that connection publishes during the alarm: one opened (or
 * recovered) during an alarm is not told until then. So the gate asks: on creation and after each recovery it
 * publishes one probe (to the default exchange, {@code mandatory=false}, an unroutable routing key
 * {@code idemkit.alarm-probe.<uuid>}: the broker drops it) on a confirm-mode channel of its own, and waits up to the
 * confirm timeout for the confirm (publishing is open) or {@code connection.blocked}. While a connection recovers the
 * gate keeps its state; the probe after the recovery decides, so a blocked notice the new connection gets before the
 * recovery listeners run is never overwritten.
 *
 * <p>It also keeps the total time spent blocked, so that a patience can count only the time the broker let the
 * connection publish, and tells its listeners ({@link #onChange}) of each change. Thread-safe.
 */
final class PublishGate implements BlockedListener {
    private static final Logger LOG = LoggerFactory.getLogger(PublishGate.class);

    static final String PROBE_PREFIX = "idemkit.alarm-probe.";

    private final Connection connection;
    private final String connectionName;
    private final Duration probeTimeout;
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
    private final Object probeLock = new Object();
    private Channel probeChannel;
    private long blockedNotices;
    private String blockedBy;
    private long blockedSince;
    private long blockedBefore;
    private long openSince = System.nanoTime();

    private PublishGate(Connection connection, Duration probeTimeout) {
        this.connection = connection;
        this.connectionName = connection.getClientProvidedName();
        this.probeTimeout = probeTimeout;
    }

    /**
     * The gate of {@code connection}, listening to its blocked / unblocked notifications (kept across recoveries), after
     * its first probe (at most {@code probeTimeout}).
     */
    static PublishGate of(Connection connection, Duration probeTimeout) {
        PublishGate gate = new PublishGate(connection, probeTimeout);
        connection.addBlockedListener(gate);
        if (connection instanceof Recoverable r) {
            r.addRecoveryListener(new RecoveryListener() {
                @Override
                public void handleRecovery(Recoverable recovered) {
                    gate.probe(gate.noticesSoFar(), "connection recovered");
                }

                @Override
                public void handleRecoveryStarted(Recoverable recovering) {
                    // the state stays as it was until the probe on the new connection decides
                }
            });
        }
        gate.probe(gate.noticesSoFar(), "connection opened");
        return gate;
    }

    /** Runs {@code listener} after each change (blocked, open), on the thread that saw it; it must not block. */
    void onChange(Runnable listener) {
        listeners.add(listener);
    }

    void removeListener(Runnable listener) {
        listeners.remove(listener);
    }

    private synchronized long noticesSoFar() {
        return blockedNotices;
    }

    /**
     * Publishes one probe and waits (up to the probe timeout) for its confirm or a {@code connection.blocked}. Opens the
     * gate when the confirm came and no blocked notice arrived since {@code noticesBefore}; keeps it as it is when the
     * broker said blocked; opens it (and says so) when neither came in time, as nothing shows an alarm.
     */
    private void probe(long noticesBefore, String why) {
        AtomicBoolean confirmed = new AtomicBoolean();
        Channel ch;
        ConfirmListener listener;
        try {
            ch = probeChannel();
            long seq = ch.getNextPublishSeqNo();
            listener = ch.addConfirmListener((tag, multiple) -> {
                if (tag == seq || multiple && tag > seq) {
                    confirmed.set(true);
                }
            }, (tag, multiple) -> confirmed.set(true)); // a nack still answers: the broker read the publish
            ch.basicPublish("", PROBE_PREFIX + UUID.randomUUID(), false, null, new byte[0]);
        } catch (IOException | RuntimeException e) {
            LOG.warn("decision=alarm-probe-failed connection={} cause=\"{}\" detail=\"the gate follows the broker's"
                    + " notices only\"", connectionName, e.getMessage());
            if (noticesSoFar() == noticesBefore) {
                open(why + ", probe not sent");
            }
            return;
        }
        long deadline = System.nanoTime() + probeTimeout.toNanos();
        try {
            awaitProbe(confirmed, noticesBefore, deadline);
        } finally {
            ch.removeConfirmListener(listener);
        }
        synchronized (this) {
            if (blockedNotices != noticesBefore) {
                return; // the broker said blocked: it says unblocked when the alarm ends
            }
        }
        if (!confirmed.get()) {
            LOG.warn("decision=alarm-probe-unanswered connection={} within={}ms detail=\"no blocked notice either: the"
                    + " gate opens\"", connectionName, probeTimeout.toMillis());
        }
        open(why);
    }

    private synchronized void awaitProbe(AtomicBoolean confirmed, long noticesBefore, long deadline) {
        while (!confirmed.get() && blockedNotices == noticesBefore && System.nanoTime() < deadline) {
            try {
                wait(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * The probe's own confirm-mode channel, opened once (recovered with its connection), again after a channel error.
     * Its own lock: opening it waits for the connection's thread, which may be delivering a notice to this gate.
     */
    private Channel probeChannel() throws IOException {
        synchronized (probeLock) {
            if (probeChannel == null || !probeChannel.isOpen()) {
                Channel ch = connection.createChannel();
                ch.confirmSelect();
                probeChannel = ch;
            }
            return probeChannel;
        }
    }

    @Override
    public void handleBlocked(String reason) {
        synchronized (this) {
            blockedNotices++;
            notifyAll();
            if (blockedBy != null) {
                return;
            }
            blockedBy = reason == null || reason.isBlank() ? "no reason given" : reason;
            blockedSince = System.nanoTime();
        }
        listeners.forEach(Runnable::run);
        LOG.warn("decision=publishing-blocked connection={} reason=\"{}\" detail=\"a resource alarm: deliveries wait,"
                + " unsettled, until the broker unblocks publishing\"", connectionName, reason);
    }

    @Override
    public void handleUnblocked() {
        open("unblocked by the broker");
    }

    private void open(String why) {
        long blockedMillis;
        synchronized (this) {
            if (blockedBy == null) {
                return;
            }
            long now = System.nanoTime();
            blockedBefore += now - blockedSince;
            blockedMillis = TimeUnit.NANOSECONDS.toMillis(now - blockedSince);
            blockedBy = null;
            openSince = now;
            notifyAll();
        }
        listeners.forEach(Runnable::run);
        LOG.info("decision=publishing-unblocked connection={} blocked_for={}ms cause=\"{}\"", connectionName,
                blockedMillis, why);
    }

    /** Why the broker blocks publishing now (its reason, e.g. {@code low on memory}); empty while it does not. */
    synchronized Optional<String> blockedBy() {
        return Optional.ofNullable(blockedBy);
    }

    /** {@link System#nanoTime} of the last unblocking (or of the gate's creation). */
    synchronized long openSince() {
        return openSince;
    }

    /** Nanoseconds spent blocked since the gate was created, the current block included; never decreases. */
    synchronized long blockedNanos() {
        return blockedBefore + (blockedBy == null ? 0 : System.nanoTime() - blockedSince);
    }

    /**
     * Waits while the broker blocks publishing, checking {@code giveUp} every 200 ms.
     *
     * @return true once publishing is open; false when {@code giveUp} said so first (or the thread was interrupted,
     *     its flag set again)
     */
    boolean awaitOpen(BooleanSupplier giveUp) {
        synchronized (this) {
            while (blockedBy != null) {
                if (giveUp.getAsBoolean()) {
                    return false;
                }
                try {
                    wait(200);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return true;
        }
    }
}
