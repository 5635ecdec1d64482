package dev.idemkit.adapters.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.ports.out.DeadLetterEntry;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.testsupport.ChildJvm;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The share group's safety net, with real process deaths: a consumer JVM that takes a record and is SIGKILLed holding
 * it, again and again. The broker delivers the record once more each time its acquisition lock runs out (5 s here) and
 * archives it at its delivery-count limit (3 here), unseen by anyone. idemkit dead-letters it on its last delivery
 * instead, with the reason, without handing it to the handler: after limit - 1 kills it is in the dead-letter topic and
 * nothing delivers it again. Without that (the limit check off) the third holder dies too and the record is gone: no
 * dead letter, no delivery.
 */
class KafkaShareDeliveryLimitIT extends KafkaITBase {
    private static final int LIMIT = 3;

    @Test
    @Timeout(240)
    void aRecordWhoseConsumersDieHoldingItIsDeadLetteredOnItsLastDeliveryNotArchivedUnseen() throws Exception {
        String topic = topic("share-limit");
        KafkaSettings settings = KafkaBroker.shared().settings().withPartitions(1)
                .withConsumption(KafkaSettings.Consumption.SHARE);
        KafkaMessageTransport t = transport(settings);
        t.declare(topic);
        groupConfig(settings.shareGroup(topic), Map.of("share.record.lock.duration.ms", "5000",
                "share.delivery.count.limit", Integer.toString(LIMIT)));
        t.publish(topic, OutgoingMessage.of("ok-1", "fine".getBytes(StandardCharsets.UTF_8)));
        t.publish(topic, OutgoingMessage.of("poison-1", "kills its consumer".getBytes(StandardCharsets.UTF_8)));

        int kills = 0;
        boolean deadLettered = false;
        List<String> acked = new CopyOnWriteArrayList<>();
        List<String> transcript = new CopyOnWriteArrayList<>();
        for (int n = 1; n <= LIMIT + 1 && !deadLettered; n++) {
            int child = n;
            try (ChildJvm c = ChildJvm.of(ShareHolderChild.class.getName())
                    .args(List.of(settings.bootstrapServers(), topic)).log(java.nio.file.Path.of("target", "child-logs"),
                            "share-holder-" + topic + "-" + child).start()) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(45);
                while (System.nanoTime() < deadline) {
                    Optional<String> line = c.awaitLine("", Duration.ofMillis(250));
                    line.filter(l -> !l.isBlank()).ifPresent(l -> transcript.add(child + ": " + l));
                    if (line.isPresent() && line.get().startsWith("ACKED ")) {
                        acked.add(line.get().substring("ACKED ".length()));
                    } else if (line.isPresent() && line.get().startsWith("HOLDING")) {
                        // held a moment (well within its 5 s lock: a batch-mate's ACCEPT is sent meanwhile), as a hung
                        // handler holds it, then the process dies: a real SIGKILL
                        dev.idemkit.ports.contract.Eventually.pause(1500);
                        c.unread().stream().filter(l -> l.startsWith("ACKED "))
                                .forEach(l -> acked.add(l.substring("ACKED ".length())));
                        assertThat(c.kill()).isEqualTo(ChildJvm.SIGKILLED);
                        kills++;
                        break;
                    } else if (line.isEmpty() && t.deadLetters().depth(topic) > 0) {
                        deadLettered = true;
                        break;
                    }
                }
            }
        }
        System.out.println("share-delivery-limit transcript: " + transcript);
        assertThat(deadLettered).as("poison-1 dead-lettered on its last delivery (kills: %d); without it the broker"
                + " archives the record unseen; what the children printed: %s", kills, transcript).isTrue();
        assertThat(kills).as("consumers killed holding it, one per delivery before the last; what the children"
                + " printed: %s", transcript).isEqualTo(LIMIT - 1);
        List<DeadLetterEntry> dead = t.deadLetters().peek(topic, 10);
        assertThat(dead).hasSize(1);
        assertThat(dead.get(0).deadLetter().original().rawId()).isEqualTo("poison-1");
        assertThat(dead.get(0).deadLetter().reason()).contains("delivered " + LIMIT + " times")
                .contains("delivery-count limit is " + LIMIT);

        assertThat(acked).as("ok-1, polled with poison-1: its ACCEPT is sent while poison-1 is held, so it is acked"
                + " once and not dead-lettered with it").containsOnlyOnce("ok-1");

        // nothing delivers it again
        List<String> seen = new CopyOnWriteArrayList<>();
        subscriptions.add(t.subscribe(topic, d -> {
            seen.add(d.message().rawId());
            d.ack();
        }));
        dev.idemkit.ports.contract.Eventually.pause(4000);
        assertThat(seen).as("deliveries after the dead letter").doesNotContain("poison-1");
        assertThat(seen).as("ok-1 was accepted").doesNotContain("ok-1");
    }

    private static void groupConfig(String group, Map<String, String> values) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaBroker.shared().bootstrapServers());
        try (Admin admin = Admin.create(p)) {
            List<AlterConfigOp> ops = values.entrySet().stream().map(e -> new AlterConfigOp(
                    new ConfigEntry(e.getKey(), e.getValue()), AlterConfigOp.OpType.SET)).toList();
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), ops)).all()
                    .get(30, TimeUnit.SECONDS);
        }
    }
}
