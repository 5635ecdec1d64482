package dev.idemkit.ports.memory;

import dev.idemkit.ports.contract.ContractGenerators;
import dev.idemkit.ports.contract.MessageTransportContract;
import dev.idemkit.ports.out.DeadLetterQueue;
import dev.idemkit.ports.out.MessageTransport;
import org.junit.jupiter.api.AfterAll;

class InMemoryMessageTransportContractTest extends MessageTransportContract {
    private static final InMemoryMessageTransport TRANSPORT = new InMemoryMessageTransport();

    @AfterAll
    static void closeTransport() {
        TRANSPORT.close();
    }

    @Override
    protected MessageTransport transport() {
        return TRANSPORT;
    }

    @Override
    protected DeadLetterQueue deadLetters() {
        return TRANSPORT;
    }

    @Override
    protected String newQueue() {
        return ContractGenerators.fresh("queue");
    }

    @Override
    protected void deleteQueue(String queue) {
        // nothing to delete: an in-memory queue is garbage once nobody names it
    }
}
