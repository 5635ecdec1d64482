package dev.idemkit.adapters.sqs;

import dev.idemkit.ports.contract.MessageTransportContract;
import dev.idemkit.ports.out.DeadLetterQueue;
import dev.idemkit.ports.out.MessageTransport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The ports' transport contract, unchanged, against SQS (ElasticMQ embedded in the test JVM). */
class SqsMessageTransportContractIT extends MessageTransportContract {
    private static EmbeddedSqs sqs;
    private static SqsMessageTransport transport;
    private static SqsDeadLetterQueue deadLetters;

    @BeforeAll
    static void startServer() {
        sqs = EmbeddedSqs.start();
        transport = new SqsMessageTransport(sqs.settings());
        deadLetters = transport.deadLetters();
    }

    @AfterAll
    static void stopServer() {
        transport.close();
        sqs.close();
    }

    @Override
    protected MessageTransport transport() {
        return transport;
    }

    @Override
    protected DeadLetterQueue deadLetters() {
        return deadLetters;
    }

    @Override
    protected String newQueue() {
        return EmbeddedSqs.uniqueName("contract");
    }

    @Override
    protected void deleteQueue(String queue) {
        transport.deleteQueues(queue);
    }
}
