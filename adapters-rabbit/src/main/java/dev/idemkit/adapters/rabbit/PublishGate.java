package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.BlockedListener;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Recoverable;
import com.rabbitmq.client.RecoveryListener;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
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
 * <p>It also keeps the total time spent blocked, so that a patience can count only the time the broker let the
 * connection publish. A connection recovery opens the gate: the new connection is told again if the alarm lasts.
 * Thread-safe.
 */
final class PublishGate implements BlockedListener {
    private static final Logger LOG = LoggerFactory.getLogger(PublishGate.class);

    private final String connectionName;
    private String blockedBy;
    private long blockedSince;
    private long blockedBefore;
    private long openSince = System.nanoTime();

    private PublishGate(String connectionName) {
        this.connectionName = connectionName;
    }

    /** The gate of {@code connection}, listening to its blocked / unblocked notifications (kept across recoveries). */
    static PublishGate of(Connection connection) {
        PublishGate gate = new PublishGate(connection.getClientProvidedName());
        connection.addBlockedListener(gate);
        if (connection instanceof Recoverable r) {
            r.addRecoveryListener(new RecoveryListener() {
                @Override
                public void handleRecovery(Recoverable recovered) {
                    gate.open("connection recovered");
                }

                @Override
                public void handleRecoveryStarted(Recoverable recovering) {
                    // still blocked as far as anyone can tell, until the new connection is there
                }
            });
        }
        return gate;
    }

    @Override
    public void handleBlocked(String reason) {
        synchronized (this) {
            if (blockedBy != null) {
                return;
            }
            blockedBy = reason == null || reason.isBlank() ? "no reason given" : reason;
            blockedSince = System.nanoTime();
        }
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
