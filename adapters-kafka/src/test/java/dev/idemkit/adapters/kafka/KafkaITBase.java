package dev.idemkit.adapters.kafka;

import dev.idemkit.ports.out.Subscription;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** Transports, subscriptions and topics of one test on the shared broker, all closed and deleted after it. */
abstract class KafkaITBase {
    private final List<KafkaMessageTransport> transports = new ArrayList<>();
    protected final List<Subscription> subscriptions = new ArrayList<>();
    private final List<String> topics = new ArrayList<>();
    /** A plain producer for records idemkit would not write (no message id, forged headers, oversized). */
    protected KafkaProducer<byte[], byte[]> raw;

    @BeforeEach
    void rawProducer() {
        raw = new KafkaProducer<>(KafkaMessageTransport.producerProperties(KafkaBroker.shared().settings()),
                new ByteArraySerializer(), new ByteArraySerializer());
    }

    @AfterEach
    void closeAndDelete() {
        subscriptions.forEach(Subscription::close);
        raw.close();
        KafkaMessageTransport any = transport(KafkaBroker.shared().settings());
        topics.forEach(any::deleteTopics);
        transports.forEach(KafkaMessageTransport::close);
    }

    protected final KafkaMessageTransport transport(KafkaSettings settings) {
        KafkaMessageTransport t = new KafkaMessageTransport(settings);
        transports.add(t);
        return t;
    }

    protected final String topic(String prefix) {
        String t = KafkaBroker.uniqueTopic(prefix);
        topics.add(t);
        return t;
    }
}
