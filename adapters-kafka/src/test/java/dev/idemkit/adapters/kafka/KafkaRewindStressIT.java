package dev.idemkit.adapters.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Deliveries settled out of order from many threads, a fifth of them given back (rewinds racing each other and the
 * retry topics' pauses), some retried: every record is still acked at least once (a commit that passed a record
 * never settled would leave it unacked for good), and once a quiet subscription has run, the group's commit is at
 * the end (nothing pins it).
 */
@Tag("slow") // full tier: a stress run; KafkaScenariosIT and KafkaSettleFailuresIT pin the rewind cases one by one
class KafkaRewindStressIT {

    @Test
    void rewindsFromManyThreadsNeverLetTheCommitPassARecordThatWasNotSettled() throws Exception {
        KafkaMessageTransport t = new KafkaMessageTransport(KafkaBroker.shared().settings().withPartitions(2));
        String topic = KafkaBroker.uniqueTopic("rewind-stress");
        ExecutorService settlers = Executors.newFixedThreadPool(8);
        try {
            int n = 300;
            for (int i = 0; i < n; i++) {
                t.publish(topic, OutgoingMessage.of("m-" + i, "x".getBytes(StandardCharsets.UTF_8)));
            }
            Set<String> acked = ConcurrentHashMap.newKeySet();
            Set<String> givenBack = ConcurrentHashMap.newKeySet();
            DeliveryHandler handler = d -> settlers.execute(() -> {
                String id = d.message().rawId();
                ThreadLocalRandom random = ThreadLocalRandom.current();
                try {
                    Thread.sleep(random.nextInt(3));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                int roll = random.nextInt(100);
                if (d.attempt() == 1 && roll < 20) {
                    givenBack.add(id);
                    ((KafkaDelivery) d).abandon();
                } else if (d.attempt() == 1 && roll < 30) {
                    d.retryAfter(Duration.ofMillis(random.nextInt(300)), new AttemptRecord(1, Instant.now(), "busy"));
                } else {
                    acked.add(id);
                    d.ack();
                }
            });
            // closed mid-stream, rewinds and retries in flight: what it commits must not pass what was not settled
            Subscription first = t.subscribe(topic, handler);
            Eventually.await(Duration.ofSeconds(120), "half of the records acked", () -> acked.size() >= n / 2);
            first.close();
            Subscription second = t.subscribe(topic, handler);
            Eventually.await(Duration.ofSeconds(120), "every record acked", () -> acked.size() == n);
            Eventually.pause(1000);
            second.close();

            // what the second one had not committed past (a rewind still pending when it closed) comes again once
            Subscription quiet = t.subscribe(topic, d -> d.ack());
            Eventually.pause(8000); // joins the group, fetches from the committed offsets, acks
            quiet.close();
            Set<String> third = ConcurrentHashMap.newKeySet();
            Subscription last = t.subscribe(topic, d -> {
                third.add(d.message().rawId());
                d.ack();
            });
            Eventually.pause(8000);
            last.close();
            assertThat(givenBack).as("rewinds happened").isNotEmpty();
            assertThat(third).as("records a subscription without rewinds had not committed past").isEmpty();
        } finally {
            settlers.shutdownNow();
            settlers.awaitTermination(5, TimeUnit.SECONDS);
            t.deleteTopics(topic);
            t.close();
        }
    }
}
