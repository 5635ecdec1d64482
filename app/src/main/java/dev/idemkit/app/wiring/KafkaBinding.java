package dev.idemkit.app.wiring;

import dev.idemkit.adapters.kafka.KafkaMessageTransport;
import dev.idemkit.adapters.kafka.KafkaSettings;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.ports.out.DeadLetterQueue;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.ports.out.LogPositions;
import dev.idemkit.ports.out.MessageTransport;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Kafka, wired: the configured bootstrap servers (no embedded broker: Kafka is never the default transport). */
final class KafkaBinding implements TransportBinding {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaBinding.class);

    private final KafkaMessageTransport transport;

    private KafkaBinding(KafkaMessageTransport transport) {
        this.transport = transport;
    }

    /**
     * Connects, and fails within 10 s naming the servers when no broker answers; with {@code kafka.offsets=database}
     * the consumer groups keep their positions in {@code inbox}'s transactions too.
     */
    static KafkaBinding start(AppSettings s, InboxStore<?> inbox) {
        LogPositions positions = null;
        if (s.transport().kafkaOffsets() == AppSettings.KafkaOffsets.DATABASE) {
            if (!inbox.keepsPositions()) {
                throw new IllegalStateException("kafka.offsets=database: the store keeps no positions");
            }
            positions = inbox.positions();
        }
        KafkaMessageTransport transport = new KafkaMessageTransport(settings(s), positions);
        try {
            transport.awaitBroker(Duration.ofSeconds(10));
        } catch (RuntimeException e) {
            transport.close();
            throw e;
        }
        return new KafkaBinding(transport);
    }

    static KafkaSettings settings(AppSettings s) {
        return KafkaSettings.defaults(s.transport().kafkaBootstrapServers()).withConcurrency(s.transport().concurrency())
                .withConsumption(s.transport().kafkaConsumption() == AppSettings.KafkaConsumption.SHARE
                        ? KafkaSettings.Consumption.SHARE : KafkaSettings.Consumption.GROUP);
    }

    @Override
    public MessageTransport transport() {
        return transport;
    }

    @Override
    public DeadLetterQueue deadLetters() {
        return transport.deadLetters();
    }

    @Override
    public String description() {
        return "Kafka at " + transport.settings().bootstrapServers() + " (idempotent producer, acks=all; "
                + (transport.settings().consumption() == KafkaSettings.Consumption.SHARE
                        ? "share groups: each record acknowledged after its settle)"
                        : transport.keepsPositions() ? "offsets in the database: each position committed with its"
                                + " effects, and in Kafka after settle)" : "commit after settle)");
    }

    @Override
    public AppSettings.TransportKind kind() {
        return AppSettings.TransportKind.KAFKA;
    }

    @Override
    public boolean embedded() {
        return false;
    }

    /** Kafka topic names take the app's logical names as they are ({@code orders.placed}). */
    @Override
    public String queue(String logical) {
        return logical;
    }

    @Override
    public List<String> brokerTrail(String queue, String deadLetterId) {
        return List.of("(Kafka has no x-death; origin topic, partition, offset, reason and attempts travel as headers"
                + " of the record in " + queue + ".dlt)");
    }

    @Override
    public void deleteQueue(String queue) {
        try {
            transport.deleteTopics(queue);
        } catch (RuntimeException e) {
            LOG.warn("could not delete the topics of {}: {}", queue, e.toString());
        }
    }

    @Override
    public void close() {
        transport.close();
    }
}
