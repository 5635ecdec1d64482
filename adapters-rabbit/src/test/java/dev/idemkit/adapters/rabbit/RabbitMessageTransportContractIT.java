package dev.idemkit.adapters.rabbit;

import dev.idemkit.ports.contract.MessageTransportContract;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.DeadLetterQueue;
import dev.idemkit.ports.out.MessageTransport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The ports' transport contract, unchanged, against the real broker. */
class RabbitMessageTransportContractIT extends MessageTransportContract {
    private static RabbitMessageTransport transport;

    @BeforeAll
    static void connect() {
        transport = new RabbitMessageTransport(RabbitFixtures.settings().withConsumers(2), Clock.system(),
                RabbitFixtures.anyConnectionName("contract"));
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
        return transport.deadLetterQueue();
    }

    @Override
    protected String newQueue() {
        return RabbitFixtures.anyQueue("contract");
    }

    @Override
    protected void deleteQueue(String queue) {
        transport.deleteTopology(queue);
    }
}
