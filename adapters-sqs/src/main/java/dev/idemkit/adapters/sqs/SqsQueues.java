package dev.idemkit.adapters.sqs;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.GetQueueAttributesResponse;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;

/**
 * Resolves queue names to URLs, creating the work queue and its dead-letter queue idempotently on
 * first use: the DLQ is {@code <name>-dlq}, or {@code <base>-dlq.fifo} for a FIFO queue
 * {@code <base>.fifo}. A name ending in {@code .fifo} makes both queues FIFO (without content-based
 * deduplication: the transport always gives the deduplication id). With a configured redrive max
 * receive count, the work queue gets a native RedrivePolicy to its DLQ as a safety net.
 */
final class SqsQueues {
    private static final Logger LOG = LoggerFactory.getLogger(SqsQueues.class);
    private static final String FIFO = ".fifo";

    private final SqsClient sqs;
    private final SqsSettings settings;
    private final Map<String, String> urls = new ConcurrentHashMap<>();

    SqsQueues(SqsClient sqs, SqsSettings settings) {
        this.sqs = sqs;
        this.settings = settings;
    }

    static boolean isFifo(String name) {
        return name.endsWith(FIFO);
    }

    static String deadLetterName(String name) {
        return isFifo(name) ? name.substring(0, name.length() - FIFO.length()) + "-dlq" + FIFO : name + "-dlq";
    }

    /** The URL of work queue {@code name}, creating it and its DLQ when absent. */
    String workQueue(String name) {
        String url = urls.get(name);
        if (url != null) {
            return url;
        }
        String dlqUrl = deadLetterQueue(name);
        Map<QueueAttributeName, String> attributes = baseAttributes(name);
        attributes.put(QueueAttributeName.VISIBILITY_TIMEOUT,
                Long.toString(settings.visibilityTimeout().toSeconds()));
        url = ensure(name, attributes);
        if (settings.redriveMaxReceiveCount() > 0) {
            // set on every resolve, so that a queue created earlier gets the safety net too
            String arn = sqs.getQueueAttributes(r -> r.queueUrl(dlqUrl).attributeNames(QueueAttributeName.QUEUE_ARN))
                    .attributes().get(QueueAttributeName.QUEUE_ARN);
            String policy = "{\"deadLetterTargetArn\":\"" + arn + "\",\"maxReceiveCount\":\""
                    + settings.redriveMaxReceiveCount() + "\"}";
            String workUrl = url;
            sqs.setQueueAttributes(r -> r.queueUrl(workUrl).attributes(Map.of(QueueAttributeName.REDRIVE_POLICY, policy)));
            LOG.info("redrive policy queue={} max_receive_count={}", name, settings.redriveMaxReceiveCount());
        }
        urls.put(name, url);
        return url;
    }

    /**
     * The URL of the DLQ of work queue {@code name}, creating it when absent. Its retention is set to SQS's longest,
     * 14 days, on every first resolve, so that no DLQ (one created by hand included) expires a dead letter sooner:
     * a dead letter waits for a human. How old one may be for a redrive is the dead-letter service's rule.
     */
    String deadLetterQueue(String name) {
        String dlq = deadLetterName(name);
        String url = urls.get(dlq);
        if (url == null) {
            Map<QueueAttributeName, String> attributes = baseAttributes(name);
            attributes.put(QueueAttributeName.MESSAGE_RETENTION_PERIOD, retentionSeconds());
            url = ensure(dlq, attributes);
            String created = url;
            sqs.setQueueAttributes(r -> r.queueUrl(created).attributes(
                    Map.of(QueueAttributeName.MESSAGE_RETENTION_PERIOD, retentionSeconds())));
            urls.put(dlq, url);
        }
        return url;
    }

    /**
     * The URL of the existing DLQ of work queue {@code name}, for reading and redriving: nothing is created, so a
     * mistyped queue name is an error instead of a new empty queue.
     *
     * @throws QueueDoesNotExistException when there is no such DLQ
     */
    String existingDeadLetterQueue(String name) {
        String dlq = deadLetterName(name);
        String url = urls.get(dlq);
        return url != null ? url : sqs.getQueueUrl(r -> r.queueName(dlq)).queueUrl();
    }

    /** The URL of existing work queue {@code name}, without creating it. */
    String existingWorkQueue(String name) {
        String url = urls.get(name);
        return url != null ? url : sqs.getQueueUrl(r -> r.queueName(name)).queueUrl();
    }

    private String retentionSeconds() {
        return Long.toString(SqsSettings.MAX_RETENTION.toSeconds());
    }

    /** Attribute values of a queue, e.g. its approximate message counts. */
    GetQueueAttributesResponse attributes(String url, QueueAttributeName... names) {
        return sqs.getQueueAttributes(r -> r.queueUrl(url).attributeNames(names));
    }

    /** Deletes the work queue and its DLQ if they exist (tests and tear-down). */
    void delete(String name) {
        for (String q : new String[] {name, deadLetterName(name)}) {
            urls.remove(q);
            try {
                String url = sqs.getQueueUrl(r -> r.queueName(q)).queueUrl();
                sqs.deleteQueue(r -> r.queueUrl(url));
                LOG.info("deleted queue={}", q);
            } catch (QueueDoesNotExistException absent) {
                LOG.debug("queue={} already absent", q);
            }
        }
    }

    private static Map<QueueAttributeName, String> baseAttributes(String name) {
        Map<QueueAttributeName, String> attributes = new HashMap<>();
        if (isFifo(name)) {
            attributes.put(QueueAttributeName.FIFO_QUEUE, "true");
            attributes.put(QueueAttributeName.CONTENT_BASED_DEDUPLICATION, "false");
        }
        return attributes;
    }

    /** Get first, create when absent: CreateQueue with other attributes than an existing queue's fails. */
    private String ensure(String name, Map<QueueAttributeName, String> attributes) {
        try {
            return sqs.getQueueUrl(r -> r.queueName(name)).queueUrl();
        } catch (QueueDoesNotExistException absent) {
            String url = sqs.createQueue(r -> r.queueName(name).attributes(attributes)).queueUrl();
            LOG.info("created queue={} attributes={}", name, attributes.keySet());
            return url;
        }
    }
}
