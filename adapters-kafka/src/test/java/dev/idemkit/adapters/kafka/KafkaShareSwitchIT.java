package dev.idemkit.adapters.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A topic that its consumer group consumed switches to share consumption: the share group starts where the consumer
 * group committed, not at the earliest record (which would re-run what was processed, beyond the inbox's retention
 * when the topic is kept longer than that).
 */
class KafkaShareSwitchIT extends KafkaITBase {

    @Test
    void aShareGroupStartsWhereTheTopicsConsumerGroupCommitted() {
        String topic = topic("share-switch");
        KafkaSettings group = KafkaBroker.shared().settings().withPartitions(2);
        KafkaMessageTransport byGroup = transport(group);
        for (int i = 0; i < 10; i++) {
            byGroup.publish(topic, OutgoingMessage.of("before-" + i, bytes("b" + i)));
        }
        List<String> first = new CopyOnWriteArrayList<>();
        Subscription s = byGroup.subscribe(topic, d -> {
            first.add(d.message().rawId());
            d.ack();
        });
        Eventually.await(Duration.ofSeconds(30), "the consumer group's 10", () -> first.size() >= 10);
        s.close(); // commits what is settled
        for (int i = 0; i < 5; i++) {
            byGroup.publish(topic, OutgoingMessage.of("after-" + i, bytes("a" + i)));
        }

        KafkaMessageTransport byShare = transport(group.withConsumption(KafkaSettings.Consumption.SHARE));
        List<String> seen = new CopyOnWriteArrayList<>();
        subscriptions.add(byShare.subscribe(topic, d -> {
            seen.add(d.message().rawId());
            d.ack();
        }));
        Eventually.await(Duration.ofSeconds(30), "the five published after the switch", () -> seen.size() >= 5);
        Eventually.pause(2000);
        assertThat(seen).as("the share group's deliveries").containsExactlyInAnyOrder("after-0", "after-1", "after-2",
                "after-3", "after-4");
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
