package dev.idemkit.adapters.kafka;

import dev.idemkit.ports.contract.MessageTransportContract;
import dev.idemkit.ports.out.DeadLetterQueue;
import dev.idemkit.ports.out.MessageTransport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The ports' transport contract, unchanged, with the work topic consumed by a share group (KIP-932) on a real KRaft
 * broker in a JVM of its own: the retry topics stay in the consumer group, dead letters in the same dead-letter topic.
 */
class KafkaShareTransportContractIT extends MessageTransportContract {
    private static KafkaMessageTransport transport;

    @BeforeAll
    static void connect() {
        transport = new KafkaMessageTransport(KafkaBroker.shared().settings()
                .withConsumption(KafkaSettings.Consumption.SHARE));
    }

    @AfterAll
    static void disconnect() {
        transport.close();
    }

    @Override
    protected MessageTransport transport() {
        return transport;
    }

    @Override
    protected DeadLetterQueue deadLetters() {
        return transport.deadLetters();
    }

    @Override
    protected String newQueue() {
        return KafkaBroker.uniqueTopic("share-contract");
    }

    @Override
    protected void deleteQueue(String queue) {
        transport.deleteTopics(queue);
    }
}
