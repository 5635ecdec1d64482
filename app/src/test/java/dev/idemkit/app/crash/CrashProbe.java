package dev.idemkit.app.crash;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where a crash child stops for its SIGKILL. Armed by the system properties {@code idemkit.crash.point} and
 * {@code idemkit.crash.hit}: the n-th time that point is reached, the thread prints {@code CRASH-POINT <point>} on
 * standard output and parks forever, holding whatever it held; the harness then kills the process from outside.
 * Every other thread goes on until the kill lands, as they would in a real crash. Unarmed, it does nothing.
 *
 * <p>Test code only: production classes never call it; the handler and delivery wrappers of {@link CrashChild} and
 * the advice that {@link CrashAgent} weaves into the adapters do.
 */
public final class CrashProbe {
    private static final CrashPoint ARMED = armed();
    private static final int HIT = Integer.getInteger("idemkit.crash.hit", 1);
    private static final AtomicInteger REACHED = new AtomicInteger();

    private CrashProbe() {}

    private static CrashPoint armed() {
        String p = System.getProperty("idemkit.crash.point", "");
        return p.isEmpty() || p.equals("NONE") ? null : CrashPoint.valueOf(p);
    }

    /** The thread reached {@code point}: stops it there if this is the armed hit. */
    public static void reached(CrashPoint point) {
        if (point != ARMED || REACHED.incrementAndGet() != HIT) {
            return;
        }
        dev.idemkit.testsupport.KillPoint.stopHere(point.name());
    }

    /** ConfirmingPublisher.publish to {@code queue} returned (advice in {@link CrashAgent}). */
    public static void published(String queue) {
        if (queue.contains(".retry.")) {
            reached(CrashPoint.RETRY_REPUBLISHED_BEFORE_ACK);
        } else if (queue.endsWith(".dlq.hold")) {
            reached(CrashPoint.DEAD_LETTERED_BEFORE_REMOVAL);
        }
    }

    /** A Kafka record was acked by the broker (advice in {@link CrashAgent}); {@code approved}: a redrive copy. */
    public static void kafkaSent(String topic, boolean approved) {
        if (approved) {
            reached(CrashPoint.REDRIVE_PUBLISHED_BEFORE_REMOVAL);
        } else if (topic.contains(".retry.")) {
            reached(CrashPoint.RETRY_REPUBLISHED_BEFORE_ACK);
        } else if (topic.endsWith(".dlt")) {
            reached(CrashPoint.DEAD_LETTERED_BEFORE_REMOVAL);
        }
    }

    /** Records whose share-group acknowledgement the broker answered without an error (advice in {@link CrashAgent}). */
    private static final AtomicInteger SHARE_ACKNOWLEDGED = new AtomicInteger();

    /** The broker accepted {@code records} acknowledgements of a share consumer. */
    public static void shareAcknowledged(int records) {
        SHARE_ACKNOWLEDGED.addAndGet(records);
    }

    /** How many share-group acknowledgements the broker has accepted so far. */
    public static int shareAcknowledged() {
        return SHARE_ACKNOWLEDGED.get();
    }

    /** An SQS SendMessage returned (advice in {@link CrashAgent}). */
    public static void sqsSent(String queueUrl, boolean approved) {
        if (approved) {
            reached(CrashPoint.REDRIVE_PUBLISHED_BEFORE_REMOVAL);
        } else if (queueUrl.endsWith("-dlq")) {
            reached(CrashPoint.DEAD_LETTERED_BEFORE_REMOVAL);
        }
    }
}
