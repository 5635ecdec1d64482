package dev.idemkit.ports.broken;

import dev.idemkit.ports.contract.ContractGenerators;
import dev.idemkit.ports.contract.MessageTransportContract;
import dev.idemkit.ports.memory.InMemoryMessageTransport;
import dev.idemkit.ports.out.DeadLetterQueue;
import dev.idemkit.ports.out.MessageTransport;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;

/** The transport contract against {@link AckOnRetryMessageTransport}; run only by {@link ContractSuitesBiteTest}. */
public class BrokenAckOnRetryTransportSuite extends MessageTransportContract {
    private static final InMemoryMessageTransport MEMORY = new InMemoryMessageTransport();
    private static final AckOnRetryMessageTransport TRANSPORT = new AckOnRetryMessageTransport(MEMORY);

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
        return MEMORY;
    }

    @Override
    protected String newQueue() {
        return ContractGenerators.fresh("queue");
    }

    @Override
    protected void deleteQueue(String queue) {
        // in memory: nothing to delete
    }

    /** In memory a retry comes back within its delay; a lost one need not be awaited for 30 s. */
    @Override
    protected Duration patience() {
        return Duration.ofSeconds(4);
    }
}
