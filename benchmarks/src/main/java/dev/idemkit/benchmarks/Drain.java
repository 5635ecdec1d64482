package dev.idemkit.benchmarks;

import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.forwarding.ForwardingDelivery;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.Subscription;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Consumes a pre-filled queue with a handler and times it: from subscribing until as many deliveries as
 * were published have been settled (acked, sent to retry or dead-lettered), or the time limit.
 *
 * @param settled deliveries settled within the run; {@code acked} of them were acked
 */
record Drain(long settled, long acked, double seconds, boolean complete) {

    double rate() {
        return settled / seconds;
    }

    static Drain run(MessageTransport transport, String queue, DeliveryHandler handler, int expected, Duration limit)
            throws InterruptedException {
        AtomicLong settled = new AtomicLong();
        AtomicLong acked = new AtomicLong();
        long began = System.nanoTime();
        Map<Delivery.BulkAck, Delivery.BulkAck> bulk = new ConcurrentHashMap<>();
        Subscription s = transport.subscribe(queue, d -> handler.onDelivery(new Counting(d, settled, acked, bulk)));
        long deadline = began + limit.toNanos();
        while (settled.get() < expected && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        double seconds = (System.nanoTime() - began) / 1e9;
        long done = settled.get();
        s.close();
        return new Drain(done, acked.get(), seconds, done >= expected);
    }

    /** Counts a settlement once it has been made. */
    private static final class Counting extends ForwardingDelivery {
        private final AtomicLong settled;
        private final AtomicLong acked;
        private final Map<Delivery.BulkAck, Delivery.BulkAck> bulk;

        Counting(Delivery d, AtomicLong settled, AtomicLong acked, Map<Delivery.BulkAck, Delivery.BulkAck> bulk) {
            super(d);
            this.settled = settled;
            this.acked = acked;
            this.bulk = bulk;
        }

        /** The transport's bulk ack, counting what it acked. */
        @Override
        public Optional<Delivery.BulkAck> bulkAck() {
            return observedBulkAck(bulk, batch -> { }, batch -> {
                acked.addAndGet(batch.size());
                settled.addAndGet(batch.size());
            });
        }

        @Override
        public void ack() {
            super.ack();
            acked.incrementAndGet();
            settled.incrementAndGet();
        }

        @Override
        public void retryAfter(Duration delay, AttemptRecord failed) {
            super.retryAfter(delay, failed);
            settled.incrementAndGet();
        }

        @Override
        public void deadLetter(String reason, AttemptRecord failed) {
            super.deadLetter(reason, failed);
            settled.incrementAndGet();
        }
    }
}
