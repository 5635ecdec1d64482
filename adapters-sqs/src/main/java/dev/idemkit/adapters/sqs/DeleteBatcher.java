package dev.idemkit.adapters.sqs;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchResponse;

/**
 * Acks become deletes, grouped into {@code DeleteMessageBatch} calls of up to the batch size: the
 * first pending ack waits at most {@link #LINGER_MS} for company. A delete that fails leaves the message
 * in SQS: it comes back after its visibility timeout and the inbox sees a duplicate, never a loss.
 */
final class DeleteBatcher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DeleteBatcher.class);
    static final long LINGER_MS = 5;

    private record Pending(String queueUrl, String receiptHandle) {}

    private final SqsClient sqs;
    private final int batchSize;
    private final BlockingQueue<Pending> pending = new LinkedBlockingQueue<>();
    private final Thread worker;
    private volatile boolean running = true;

    DeleteBatcher(SqsClient sqs, int batchSize) {
        this.sqs = sqs;
        this.batchSize = batchSize;
        this.worker = new Thread(this::run, "idemkit-sqs-deleter");
        worker.setDaemon(true);
        worker.start();
    }

    void delete(String queueUrl, String receiptHandle) {
        if (!running) {
            flush(List.of(new Pending(queueUrl, receiptHandle)));
            return;
        }
        pending.add(new Pending(queueUrl, receiptHandle));
    }

    private void run() {
        while (running || !pending.isEmpty()) {
            try {
                Pending first = pending.poll(100, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                List<Pending> batch = new ArrayList<>(List.of(first));
                long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LINGER_MS);
                while (batch.size() < batchSize) {
                    Pending next = pending.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    if (next == null) {
                        break;
                    }
                    batch.add(next);
                }
                flush(batch);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private void flush(List<Pending> batch) {
        Map<String, List<Pending>> byQueue = new LinkedHashMap<>();
        batch.forEach(p -> byQueue.computeIfAbsent(p.queueUrl(), k -> new ArrayList<>()).add(p));
        byQueue.forEach((url, items) -> {
            try {
                if (items.size() == 1) {
                    sqs.deleteMessage(r -> r.queueUrl(url).receiptHandle(items.get(0).receiptHandle()));
                    return;
                }
                List<DeleteMessageBatchRequestEntry> entries = new ArrayList<>();
                for (int i = 0; i < items.size(); i++) {
                    entries.add(DeleteMessageBatchRequestEntry.builder().id(Integer.toString(i))
                            .receiptHandle(items.get(i).receiptHandle()).build());
                }
                DeleteMessageBatchResponse response = sqs.deleteMessageBatch(r -> r.queueUrl(url).entries(entries));
                response.failed().forEach(f -> LOG.warn("delete failed queue_url={} code={} detail=\"{}\";"
                        + " the message will come back and be seen as a duplicate", url, f.code(), f.message()));
            } catch (SdkException e) {
                LOG.warn("delete of {} messages failed queue_url={} error=\"{}\"; they will come back and be seen"
                        + " as duplicates", items.size(), url, e.getMessage());
            }
        });
    }

    /** Flushes what is pending and stops. */
    @Override
    public void close() {
        running = false;
        try {
            worker.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
