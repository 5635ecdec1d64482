package dev.idemkit.adapters.sqs;

import dev.idemkit.ports.out.Clock;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.services.sqs.SqsClient;

/** What the subscriptions and deliveries of one transport share: client, queues, journal, deleter, heartbeat. */
final class SqsContext implements AutoCloseable {
    final SqsClient sqs;
    final SqsSettings settings;
    final SqsQueues queues;
    final AttemptJournal journal = new AttemptJournal();
    final DeleteBatcher deleter;
    final ScheduledExecutorService heartbeat;
    final Clock clock;

    SqsContext(SqsClient sqs, SqsSettings settings, Clock clock) {
        this.sqs = sqs;
        this.settings = settings;
        this.clock = clock;
        this.queues = new SqsQueues(sqs, settings);
        this.deleter = new DeleteBatcher(sqs, settings.batchSize());
        this.heartbeat = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "idemkit-sqs-heartbeat");
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public void close() {
        deleter.close();
        heartbeat.shutdownNow();
        try {
            heartbeat.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        sqs.close();
    }
}
