package dev.idemkit.app.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idemkit.adapters.kafka.KafkaBroker;
import dev.idemkit.adapters.kafka.KafkaMessageTransport;
import dev.idemkit.adapters.kafka.KafkaSettings;
import dev.idemkit.app.CreditPlan;
import dev.idemkit.app.TestEnvironment;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.config.Sources;
import dev.idemkit.app.consumers.AccountCredit;
import dev.idemkit.app.crash.KafkaCounts;
import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.app.wiring.ConsumerKind;
import dev.idemkit.ports.out.LogPositions;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * Offsets in the database across rebalances: two instances with {@code kafka.offsets=database} on one topic; the
 * second joins once the first third of the credits is settled, the first leaves once the second third is (each a
 * rebalance: the partitions that move start at their stored positions), and each third is published only once the
 * group stands as that step says. Every account ends exact, and every partition's stored position is the
 * partition's end: each committed with the effects it covers, whichever instance held the partition then. (One record
 * per transaction here: a partition's records run one after another, so its last transaction's position is its end.
 * Batches of one partition may commit in either order, and then a stored position can stay behind a batch whose
 * neighbour was still open; Kafka's committed offset, the further one then, covers it. The crash chain kills the
 * batched path.)
 */
class KafkaPositionsRebalanceIT {
    private static final int CREDITS = 3_000;

    @Test
    void positionsFollowTheEffectsAcrossTwoRebalancesAndEndAtEachPartitionsEnd() throws Exception {
        String schema = TestEnvironment.unique("app_it_kafka_positions");
        String run = UUID.randomUUID().toString().substring(0, 8);
        String topic = AccountCredit.QUEUE + ".positions-" + run;
        CreditPlan credits = CreditPlan.of(new SplittableRandom(run.hashCode()), CREDITS, 0.3, 5, "positions-" + run);
        long distinct = credits.distinct();
        Assembly first = Assembly.start(settings(schema));
        Assembly second = null;
        Subscription a = null;
        Subscription b = null;
        KafkaMessageTransport kafka = (KafkaMessageTransport) first.transport();
        try (KafkaCounts counts = new KafkaCounts(kafka.settings());
                Admin admin = Admin.create(Map.of("bootstrap.servers", KafkaBroker.shared().bootstrapServers()))) {
            assertThat(kafka.keepsPositions()).isTrue();
            a = first.transport().subscribe(topic, first.consumer(ConsumerKind.CREDIT_ACCOUNT));
            List<OutgoingMessage> plan = credits.messages();
            int third = plan.size() / 3;
            String group = kafka.settings().group(topic);
            // each third is published only once the group stands as the step says, so every rebalance happens with
            // work left: under load the first instance once drained the whole stream before the second had joined
            publishAll(kafka, topic, plan.subList(0, third));
            await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200))
                    .until(() -> counts.pending(topic) == 0);
            second = Assembly.start(settings(schema));
            Assembly joined = second;
            b = second.transport().subscribe(topic, second.consumer(ConsumerKind.CREDIT_ACCOUNT));
            await("both instances hold partitions").atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200))
                    .until(() -> membersWithPartitions(admin, group) == 2);
            publishAll(kafka, topic, plan.subList(third, 2 * third));
            await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200))
                    .until(() -> counts.pending(topic) == 0);
            a.close();
            a = null;
            await("the second instance holds every partition").atMost(Duration.ofSeconds(120))
                    .pollInterval(Duration.ofMillis(200)).until(() -> membersWithPartitions(admin, group) == 1);
            publishAll(kafka, topic, plan.subList(2 * third, plan.size()));
            await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200)).until(() ->
                    processed(first) + processed(joined) >= distinct && counts.pending(topic) == 0);

            assertThat(credits.balances(schema)).isEqualTo(credits.expectedBalances());
            assertThat(processed(first) + processed(second)).as("each distinct credit once").isEqualTo(distinct);
            LogPositions positions = first.store().inbox().positions();
            KafkaSettings settings = kafka.settings();
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            for (int p = 0; p < settings.partitions(); p++) {
                latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
            }
            var ends = admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS);
            int checked = 0;
            for (int p = 0; p < settings.partitions(); p++) {
                long end = ends.get(new TopicPartition(topic, p)).offset();
                if (end == 0) {
                    continue; // the producer's sticky partitioner can leave a partition empty: nothing to settle there
                }
                assertThat(positions.read(settings.group(topic), topic, p)).as("partition %d's stored position", p)
                        .hasValueSatisfying(stored -> assertThat(stored.next()).isEqualTo(end));
                checked++;
            }
            assertThat(checked).as("partitions with records").isPositive();
        } finally {
            if (a != null) {
                a.close();
            }
            if (b != null) {
                b.close();
            }
            kafka.deleteTopics(topic);
            first.close();
            if (second != null) {
                second.close();
            }
            TestEnvironment.dropSchema(schema);
        }
    }

    /**
     * Every credit, pipelined; a publish the broker refused (a topic this young once answered NOT_LEADER_OR_FOLLOWER and
     * then OUT_OF_ORDER_SEQUENCE_NUMBER until the send timed out) is sent again with the same id, as an at-least-once
     * producer does.
     */
    private static void publishAll(KafkaMessageTransport kafka, String topic, List<OutgoingMessage> messages)
            throws Exception {
        List<java.util.concurrent.CompletableFuture<Void>> sent = new java.util.ArrayList<>();
        messages.forEach(m -> sent.add(kafka.publishAsync(topic, m)));
        for (int i = 0; i < messages.size(); i++) {
            OutgoingMessage m = messages.get(i);
            try {
                sent.get(i).get(60, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException refused) {
                await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> {
                    kafka.publish(topic, m);
                    return true;
                });
            }
        }
    }

    /** Members of {@code group} that hold at least one partition (0 while it rebalances or cannot be read). */
    private static long membersWithPartitions(Admin admin, String group) {
        try {
            return admin.describeConsumerGroups(List.of(group)).all().get(10, TimeUnit.SECONDS).get(group).members()
                    .stream().filter(m -> !m.assignment().topicPartitions().isEmpty()).count();
        } catch (Exception e) {
            return 0;
        }
    }

    private static double processed(Assembly assembly) {
        return assembly.metrics().count("idemkit_messages", "decision", "processed");
    }

    private static AppSettings settings(String schema) {
        Map<String, String> env = TestEnvironment.settings(schema, "IDEMKIT_CONCURRENCY", "4",
                "IDEMKIT_TRANSPORT", "kafka", "IDEMKIT_KAFKA_BOOTSTRAP_SERVERS", KafkaBroker.shared().bootstrapServers(),
                "IDEMKIT_KAFKA_OFFSETS", "database");
        return AppSettings.resolve(Sources.of(Map.of(), env));
    }
}
