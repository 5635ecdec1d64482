package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.GetResponse;
import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * {@link Delivery#ackAll} on RabbitMQ: one {@code multiple} ack where the batch's tags are the lowest unsettled ones
 * of their channel, single acks elsewhere, and never an ack of a delivery the batch does not hold (another batch's,
 * the single-message path's, or one delivered on the channel that replaced a lost one). Each test holds the deliveries
 * it does not ack, closes the subscription (the broker requeues what is unacknowledged) and reads back exactly which
 * messages are still in the queue.
 */
class BulkAckIT extends RabbitITBase {

    @Test
    void theLowestRunGoesInOneMultipleAckAndAHeldDeliveryBelowTheRestIsNotAcked() throws Exception {
        String queue = queue("bulk-ack-prefix");
        List<Delivery> got = receive(queue, 10, 1);
        List<Delivery> batch = List.of(got.get(0), got.get(1), got.get(2), got.get(4), got.get(5));

        Delivery.ackAll(batch);

        AckTracker tracker = ((RabbitDelivery) got.get(0)).tracker();
        assertThat(tracker.multipleFrames()).as("m-0..m-2 in one frame, m-4 and m-5 one by one").isEqualTo(1);
        assertThat(tracker.openCount()).as("m-3 and m-6..m-9 still open").isEqualTo(5);
        assertThat(left(queue)).containsExactlyInAnyOrder("m-3", "m-6", "m-7", "m-8", "m-9");
    }

    @Test
    void aBatchOverSeveralChannelsIsAckedWholeOnEach() throws Exception {
        String queue = queue("bulk-ack-channels");
        List<Delivery> got = receive(queue, 40, 2);
        Set<AckTracker> trackers = new HashSet<>();
        got.forEach(d -> trackers.add(((RabbitDelivery) d).tracker()));
        assertThat(trackers).as("deliveries came on two channels").hasSize(2);

        Delivery.ackAll(got);

        assertThat(trackers).allSatisfy(t -> assertThat(t.multipleFrames()).isEqualTo(1));
        assertThat(left(queue)).isEmpty();
    }

    @Test
    void concurrentBatchesOnOneChannelAckExactlyTheirOwn() throws Exception {
        Random random = new Random(20261203L);
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            for (int round = 0; round < 5; round++) {
                String queue = queue("bulk-ack-concurrent-" + round);
                List<Delivery> got = receive(queue, 200, 1);
                List<List<Delivery>> batches = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
                List<Delivery> singly = new ArrayList<>();
                Set<String> held = new HashSet<>();
                for (Delivery d : got) {
                    int where = random.nextInt(5);
                    if (where < 3) {
                        batches.get(where).add(d);
                    } else if (where == 3) {
                        singly.add(d);
                    } else {
                        held.add(d.message().rawId());
                    }
                }
                CountDownLatch go = new CountDownLatch(1);
                List<Future<?>> running = new ArrayList<>();
                for (List<Delivery> b : batches) {
                    running.add(pool.submit(() -> {
                        go.await();
                        Delivery.ackAll(b);
                        return null;
                    }));
                }
                go.countDown();
                singly.forEach(Delivery::ack);
                for (Future<?> f : running) {
                    f.get();
                }
                assertThat(left(queue)).as("round %d: exactly the held deliveries are back", round)
                        .containsExactlyInAnyOrderElementsOf(held);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aDeliveryAlreadySettledIsReportedAndTheOthersAreStillAcked() throws Exception {
        String queue = queue("bulk-ack-settled");
        List<Delivery> got = receive(queue, 4, 1);
        got.get(1).ack();

        assertThatThrownBy(() -> Delivery.ackAll(got)).isInstanceOf(IllegalStateException.class);

        assertThat(left(queue)).isEmpty();
    }

    @Test
    void aForeignDeliveryInTheBatchIsRefusedBeforeAnyIsClaimedSoTheyCanStillBeAcked() throws Exception {
        String queue = queue("bulk-ack-foreign");
        List<Delivery> got = receive(queue, 4, 1);
        Delivery foreign = new dev.idemkit.ports.forwarding.ForwardingDelivery(got.get(2)) {
            @Override
            public java.util.Optional<Delivery.BulkAck> bulkAck() {
                return got.get(2).bulkAck(); // the mistake Delivery#bulkAck warns about: passing it on unchanged
            }
        };
        List<Delivery> mixed = List.of(got.get(0), got.get(1), foreign, got.get(3));

        assertThatThrownBy(() -> Delivery.ackAll(mixed)).isInstanceOf(IllegalArgumentException.class);
        Delivery.ackAll(got);

        assertThat(left(queue)).isEmpty();
    }

    /**
     * The connection is lost while a batch is held: recovery opens a new channel instance, the broker redelivers the
     * batch there with new tags. Acking the OLD deliveries afterwards must not touch the new channel (through the
     * recovering wrapper, the old batch's last tag is exactly the new instance's offset: {@code basic.ack multiple}
     * with tag 0, which would acknowledge every redelivered, unprocessed message).
     */
    @Test
    void aBatchFromAChannelLostToAReconnectionAcksNothingOnItsReplacement() throws Exception {
        String queue = queue("bulk-ack-recovery");
        String name = RabbitFixtures.anyConnectionName("bulk-ack");
        RabbitMessageTransport consumer = closeLater(new RabbitMessageTransport(
                RabbitFixtures.settings().withConsumers(1).withPrefetch(10).withShutdownGrace(Duration.ZERO),
                Clock.system(), name));
        publish(queue, 10);
        List<Delivery> got = new CopyOnWriteArrayList<>();
        Subscription s = subscribe(consumer, queue, got::add);
        Eventually.await(Duration.ofSeconds(20), "10 deliveries", () -> got.size() == 10);
        List<Delivery> before = List.copyOf(got);

        assertThat(RabbitFixtures.closeConnections(name + "-consume")).as("connections force-closed").isEqualTo(1);
        Eventually.await(Duration.ofSeconds(60), "the 10 redelivered after recovery", () -> got.size() == 20);

        Delivery.ackAll(before); // their channel is gone: these acks fail and are logged, nothing else happens

        s.close();
        assertThat(left(queue)).as("nothing acked on the new channel").hasSize(10);
    }

    private List<Delivery> receive(String queue, int n, int consumers) throws Exception {
        RabbitMessageTransport t = closeLater(new RabbitMessageTransport(RabbitFixtures.settings()
                .withConsumers(consumers).withPrefetch(n / consumers).withShutdownGrace(Duration.ZERO), Clock.system(),
                RabbitFixtures.anyConnectionName("bulk-ack")));
        publish(queue, n);
        List<Delivery> got = new CopyOnWriteArrayList<>();
        Subscription s = subscribe(t, queue, got::add);
        Eventually.await(Duration.ofSeconds(20), n + " deliveries", () -> got.size() == n);
        subscriptions.add(s);
        List<Delivery> ordered = new ArrayList<>(got);
        ordered.sort((a, b) -> Integer.compare(number(a), number(b)));
        return ordered;
    }

    private final List<Subscription> subscriptions = new ArrayList<>();

    private void publish(String queue, int n) {
        for (int i = 0; i < n; i++) {
            transport.publish(queue, OutgoingMessage.of("m-" + i, ("n=" + i).getBytes(StandardCharsets.UTF_8)));
        }
    }

    /** Closes the subscriptions (the broker requeues what they did not ack) and takes what the queue holds. */
    private List<String> left(String queue) throws Exception {
        subscriptions.forEach(Subscription::close);
        subscriptions.clear();
        List<String> ids = new ArrayList<>();
        try (com.rabbitmq.client.Channel ch = raw.createChannel()) {
            // requeues of a closed channel reach a quorum queue asynchronously: take until nothing came for 500 ms
            long quietSince = System.nanoTime();
            while (System.nanoTime() - quietSince < 500_000_000L) {
                GetResponse r = ch.basicGet(queue, true);
                if (r == null) {
                    Thread.sleep(20);
                } else {
                    ids.add(r.getProps().getMessageId());
                    quietSince = System.nanoTime();
                }
            }
        }
        return ids;
    }

    private static int number(Delivery d) {
        return Integer.parseInt(d.message().rawId().substring(2));
    }
}
