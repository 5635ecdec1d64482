package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.impl.recovery.AutorecoveringChannel;
import com.rabbitmq.client.impl.recovery.RecoveryAwareChannelN;
import dev.idemkit.ports.out.Delivery;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The unsettled delivery tags of ONE channel instance, so that a batch of its deliveries can be acknowledged with one
 * {@code basic.ack multiple=true} where that is safe, and one by one where it is not.
 *
 * <p>{@code multiple=true} acknowledges EVERY outstanding delivery of the channel up to the tag, including ones that
 * another batch (not committed yet) or the single-message path still holds: acking those would lose them. So the
 * tracker knows every tag the channel delivered and that is not settled yet ({@link #opened} before the handler sees
 * it, {@link #closed} after its settlement frame went out), and sends {@code multiple=true} only for the longest run
 * of the lowest open tags that all belong to the batch; the batch's other tags are acked one by one. The check and
 * the frame happen under one lock, so two batches' multiple acks never overlap (an ack of an already acknowledged tag
 * closes the channel: PRECONDITION_FAILED).
 *
 * <p>One tracker per channel INSTANCE: with automatic recovery the channel a consumer holds is a wrapper whose
 * delegate is replaced on reconnection, and the new delegate numbers its tags after an offset (the old one's last
 * tag). The frames go through the delegate that delivered the tags (after a reconnection it is closed: the acks fail,
 * the broker has requeued those deliveries, the inbox makes the redelivery harmless), so a batch's run is never mixed
 * with another instance's tags. A multiple ack is sent only for a tag above the instance's offset: a lower one is not
 * the instance's own (amqp-client 5.37 drops such an ack; a {@code multiple} ack that reached the broker as tag 0
 * would acknowledge everything outstanding).
 */
final class AckTracker implements Delivery.BulkAck {
    private static final Logger LOG = LoggerFactory.getLogger(AckTracker.class);

    private final Channel channel;
    /** False for a tag of an older channel instance: such a tracker acks one by one, never {@code multiple}. */
    private final boolean multipleAllowed;
    private final TreeSet<Long> open = new TreeSet<>();
    private long multipleFrames;

    private AckTracker(Channel channel, boolean multipleAllowed) {
        this.channel = channel;
        this.multipleAllowed = multipleAllowed;
    }

    /** Chooses (and updates) the tracker of one consumer's channel for each delivered tag, and opens the tag in it. */
    static final class Selector {
        private final Channel channel;
        private AckTracker current;

        Selector(Channel channel) {
            this.channel = channel;
        }

        /**
         * The tracker of the channel instance delivering now, {@code tag} opened in it. Synchronized: after a
         * reconnection the old connection may still dispatch its last deliveries while the new one dispatches, and two
         * trackers for one instance would each believe they know every open tag. A tag at or below the current
         * instance's offset was delivered by an older instance: it gets a tracker of its own that never acks
         * {@code multiple} (its acks go nowhere: the broker requeued it when that connection died).
         */
        synchronized AckTracker open(long tag) {
            Channel instance = channel instanceof AutorecoveringChannel r ? r.getDelegate() : channel;
            AckTracker tracker;
            if (tag <= floorOf(instance)) {
                tracker = new AckTracker(instance, false);
            } else {
                if (current == null || current.channel != instance) {
                    current = new AckTracker(instance, true);
                }
                tracker = current;
            }
            tracker.opened(tag);
            return tracker;
        }
    }

    private static long floorOf(Channel instance) {
        return instance instanceof RecoveryAwareChannelN n ? n.getActiveDeliveryTagOffset() : 0;
    }

    synchronized void opened(long tag) {
        open.add(tag);
    }

    synchronized void closed(long tag) {
        open.remove(tag);
    }

    /** Open tags, for tests. */
    synchronized int openCount() {
        return open.size();
    }

    /** {@code multiple=true} frames sent so far, for tests. */
    synchronized long multipleFrames() {
        return multipleFrames;
    }

    /**
     * Acks each delivery as {@link RabbitDelivery#ack} would, in as few frames as is safe. A delivery already settled
     * is skipped and reported by an {@link IllegalStateException} after the others are acked; a failed frame is
     * logged (the broker redelivers those deliveries and the inbox makes that harmless).
     */
    @Override
    public void ackAll(List<? extends Delivery> deliveries) {
        for (Delivery d : deliveries) { // all checked before any is claimed: a claimed delivery must be acked
            if (!(d instanceof RabbitDelivery r) || r.tracker() != this) {
                throw new IllegalArgumentException("not a delivery of this channel: " + d);
            }
        }
        List<RabbitDelivery> mine = new ArrayList<>(deliveries.size());
        IllegalStateException alreadySettled = null;
        for (Delivery d : deliveries) {
            RabbitDelivery r = (RabbitDelivery) d;
            if (r.beginSettling()) {
                mine.add(r);
            } else if (alreadySettled == null) {
                alreadySettled = new IllegalStateException("a delivery of the batch was already settled: " + r.tag());
            }
        }
        try {
            send(mine);
        } finally {
            for (RabbitDelivery r : mine) {
                r.settledNow();
            }
        }
        if (alreadySettled != null) {
            throw alreadySettled;
        }
    }

    private synchronized void send(List<RabbitDelivery> batch) {
        if (batch.isEmpty()) {
            return;
        }
        TreeSet<Long> tags = new TreeSet<>();
        for (RabbitDelivery r : batch) {
            tags.add(r.tag());
        }
        long upTo = -1;
        int run = 0;
        for (Iterator<Long> it = open.iterator(); it.hasNext();) {
            long t = it.next();
            if (!tags.contains(t)) {
                break;
            }
            upTo = t;
            run++;
        }
        long floor = floorOf(channel);
        int failed = 0;
        Exception cause = null;
        if (multipleAllowed && run >= 2 && upTo > floor) {
            try {
                multipleFrames++;
                channel.basicAck(upTo, true);
            } catch (IOException | RuntimeException e) {
                cause = e;
                failed += run;
            }
            tags.headSet(upTo, true).clear();
        }
        for (long t : tags) {
            if (cause != null && !channel.isOpen()) {
                failed++;
                continue;
            }
            try {
                channel.basicAck(t, false);
            } catch (IOException | RuntimeException e) {
                cause = e;
                failed++;
            }
        }
        if (failed > 0) {
            LOG.warn("decision=ack-lost deliveries={} cause=\"{}\" (the broker redelivers them; the inbox makes that"
                    + " harmless)", failed, cause.getMessage());
        }
        for (RabbitDelivery r : batch) {
            open.remove(r.tag());
        }
    }
}
