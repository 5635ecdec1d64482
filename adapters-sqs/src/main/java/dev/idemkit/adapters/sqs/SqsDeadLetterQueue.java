package dev.idemkit.adapters.sqs;

import dev.idemkit.domain.DedupId;
import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.domain.deadletter.DeadLetterHeaders;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.DeadLetterEntry;
import dev.idemkit.ports.out.DeadLetterQueue;
import dev.idemkit.ports.out.TransportException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.sqs.model.ChangeMessageVisibilityBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;
import software.amazon.awssdk.services.sqs.model.SendMessageRequest;

/**
 * {@link DeadLetterQueue} on the SQS DLQ of a work queue ({@code <name>-dlq}). A dead letter's id is
 * the SQS MessageId of its DLQ copy, stable across receives.
 *
 * <p>SQS has no "peek": inspection receives the DLQ's messages with a short visibility timeout
 * ({@value #SCAN_VISIBILITY_SECONDS} s) and then sets their visibility back to 0. Nothing is consumed or
 * lost, but while a scan runs (and, should the process die mid-scan, for those seconds) the scanned
 * messages are invisible to any other reader of the DLQ, and each scan raises their receive counts.
 * Depth is {@code ApproximateNumberOfMessages + ApproximateNumberOfMessagesNotVisible} (approximate on
 * AWS, exact on ElasticMQ). Redrive sends the message back to the work queue whose DLQ was read (never to a
 * queue an attribute names) with the approval as
 * attributes and deletes the DLQ copy only after SQS confirmed the send.
 */
public final class SqsDeadLetterQueue implements DeadLetterQueue, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SqsDeadLetterQueue.class);
    static final int SCAN_VISIBILITY_SECONDS = 10;
    private static final int SCAN_CAP = 1_000;

    private final SqsContext ctx;
    private final boolean owned;

    /** A standalone DLQ view with its own client; close it when done. */
    public SqsDeadLetterQueue(SqsSettings settings) {
        this(new SqsContext(SqsClients.create(settings), settings, Clock.system()), true);
    }

    SqsDeadLetterQueue(SqsContext ctx) {
        this(ctx, false);
    }

    private SqsDeadLetterQueue(SqsContext ctx, boolean owned) {
        this.ctx = ctx;
        this.owned = owned;
    }

    /**
     * The DLQ's {@code MessageRetentionPeriod} as SQS reports it; empty when the DLQ does not exist or the server
     * does not report one (ElasticMQ ignores the attribute and keeps dead letters until they are removed).
     */
    @Override
    public Optional<Duration> retention(String queue) {
        Optional<String> url = dlqUrl(queue);
        if (url.isEmpty()) {
            return Optional.empty();
        }
        try {
            String seconds = ctx.queues.attributes(url.get(), QueueAttributeName.MESSAGE_RETENTION_PERIOD).attributes()
                    .get(QueueAttributeName.MESSAGE_RETENTION_PERIOD);
            return seconds == null ? Optional.empty() : Optional.of(Duration.ofSeconds(Long.parseLong(seconds)));
        } catch (NumberFormatException e) {
            return Optional.empty();
        } catch (SdkException e) {
            throw new TransportException("the retention of the DLQ of " + queue + " is unavailable", e);
        }
    }

    @Override
    public long depth(String queue) {
        try {
            Optional<String> url = dlqUrl(queue);
            if (url.isEmpty()) {
                return 0;
            }
            Map<QueueAttributeName, String> a = ctx.queues.attributes(url.get(),
                    QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES,
                    QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE).attributes();
            return Long.parseLong(a.getOrDefault(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES, "0"))
                    + Long.parseLong(a.getOrDefault(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE, "0"));
        } catch (SdkException e) {
            throw new TransportException("depth of the DLQ of " + queue + " unavailable", e);
        }
    }

    @Override
    public List<DeadLetterEntry> peek(String queue, int max) {
        Optional<String> dlq = dlqUrl(queue);
        if (dlq.isEmpty()) {
            return List.of();
        }
        String url = dlq.get();
        List<Message> seen = scan(url, SCAN_CAP, m -> false);
        giveBack(url, seen);
        return seen.stream().map(m -> SqsDeadLetters.entry(queue, m))
                .sorted(Comparator.comparing((DeadLetterEntry e) -> e.deadLetter().deadLetteredAt())
                        .thenComparing(DeadLetterEntry::id))
                .limit(Math.max(0, max)).toList();
    }

    @Override
    public Optional<DeadLetterEntry> find(String queue, String deadLetterId) {
        Optional<String> dlq = dlqUrl(queue);
        if (dlq.isEmpty()) {
            return Optional.empty();
        }
        String url = dlq.get();
        List<Message> seen = scan(url, SCAN_CAP * 10, m -> m.messageId().equals(deadLetterId));
        giveBack(url, seen);
        return seen.stream().filter(m -> m.messageId().equals(deadLetterId)).findFirst()
                .map(m -> SqsDeadLetters.entry(queue, m));
    }

    @Override
    public boolean redrive(String queue, String deadLetterId, Approval approval) {
        Optional<String> dlq = dlqUrl(queue);
        if (dlq.isEmpty()) {
            return false;
        }
        String url = dlq.get();
        List<Message> seen = scan(url, SCAN_CAP * 10, m -> m.messageId().equals(deadLetterId));
        Optional<Message> target = seen.stream().filter(m -> m.messageId().equals(deadLetterId)).findFirst();
        giveBack(url, seen.stream().filter(m -> !m.messageId().equals(deadLetterId)).toList());
        if (target.isEmpty()) {
            return false;
        }
        Message m = target.get();
        try {
            ctx.sqs.sendMessage(redriveCopy(queue, m, approval));
            ctx.sqs.deleteMessage(r -> r.queueUrl(url).receiptHandle(m.receiptHandle()));
        } catch (SdkException e) {
            giveBack(url, List.of(m));
            throw new TransportException("redrive of " + deadLetterId + " to " + queue + " failed", e);
        }
        LOG.info("redriven queue={} dead_letter={} approved_by={}", queue, deadLetterId, approval.approvedBy());
        return true;
    }

    private SendMessageRequest redriveCopy(String queue, Message m, Approval approval) {
        Map<String, String> headers = new HashMap<>(SqsWire.headers(m.messageAttributes()));
        DeadLetterHeaders.DEAD_LETTER.forEach(headers::remove); // a redriven copy carries none (packed ones included)
        boolean ours = !m.attributes().containsKey(MessageSystemAttributeName.DEAD_LETTER_QUEUE_SOURCE_ARN);
        Map<String, String> redrive = DeadLetterHeaders.redrive(approval,
                ours ? SqsDeadLetters.reason(m.messageAttributes()) : java.util.Optional.empty());
        boolean base64 = m.messageAttributes().containsKey(SqsWire.BODY_ENCODING);
        // back to the queue whose DLQ this is, whatever the message's attributes claim
        SendMessageRequest.Builder send = SendMessageRequest.builder().queueUrl(ctx.queues.existingWorkQueue(queue))
                .messageBody(m.body()).messageAttributes(SqsWire.encodeCopy(
                        SqsWire.string(m.messageAttributes(), SqsWire.MESSAGE_ID), headers, base64, redrive));
        if (SqsQueues.isFifo(queue)) {
            String group = m.attributes().get(MessageSystemAttributeName.MESSAGE_GROUP_ID);
            send.messageGroupId(group == null ? SqsDelivery.DEFAULT_GROUP : group).messageDeduplicationId(
                    DedupId.ofContent(("redrive:" + m.messageId()).getBytes(StandardCharsets.UTF_8)).value());
        }
        return send.build();
    }

    /** Receives (hiding them briefly) until {@code stop} matches, the DLQ runs dry, or {@code cap} messages. */
    private List<Message> scan(String url, int cap, Predicate<Message> stop) {
        List<Message> seen = new ArrayList<>();
        try {
            while (seen.size() < cap) {
                List<Message> batch = ctx.sqs.receiveMessage(r -> r.queueUrl(url).maxNumberOfMessages(10)
                        .waitTimeSeconds(0).visibilityTimeout(SCAN_VISIBILITY_SECONDS).messageAttributeNames("All")
                        .messageSystemAttributeNames(MessageSystemAttributeName.SENT_TIMESTAMP,
                                MessageSystemAttributeName.MESSAGE_GROUP_ID,
                                MessageSystemAttributeName.DEAD_LETTER_QUEUE_SOURCE_ARN)).messages();
                if (batch.isEmpty()) {
                    break;
                }
                seen.addAll(batch);
                if (batch.stream().anyMatch(stop)) {
                    break;
                }
            }
        } catch (SdkException e) {
            giveBack(url, seen);
            throw new TransportException("scan of DLQ " + url + " failed", e);
        }
        return seen;
    }

    /** Visibility back to 0, ten per call. Failures only delay visibility by the scan timeout. */
    private void giveBack(String url, List<Message> messages) {
        for (int from = 0; from < messages.size(); from += 10) {
            List<Message> chunk = messages.subList(from, Math.min(messages.size(), from + 10));
            List<ChangeMessageVisibilityBatchRequestEntry> entries = new ArrayList<>();
            for (int i = 0; i < chunk.size(); i++) {
                entries.add(ChangeMessageVisibilityBatchRequestEntry.builder().id(Integer.toString(i))
                        .receiptHandle(chunk.get(i).receiptHandle()).visibilityTimeout(0).build());
            }
            try {
                ctx.sqs.changeMessageVisibilityBatch(r -> r.queueUrl(url).entries(entries));
            } catch (SdkException e) {
                LOG.warn("could not make {} scanned dead letters visible again; they reappear within {} s",
                        chunk.size(), SCAN_VISIBILITY_SECONDS);
            }
        }
    }

    /**
     * The existing DLQ of {@code queue}, or empty when there is none: reading and redriving never create a queue
     * (a mistyped name must not leave a new empty queue behind), and a DLQ that does not exist holds nothing.
     */
    private Optional<String> dlqUrl(String queue) {
        try {
            return Optional.of(ctx.queues.existingDeadLetterQueue(queue));
        } catch (QueueDoesNotExistException e) {
            LOG.debug("no dead-letter queue {} on SQS", SqsQueues.deadLetterName(queue));
            return Optional.empty();
        } catch (SdkException e) {
            throw new TransportException("cannot resolve the DLQ of " + queue, e);
        }
    }

    @Override
    public void close() {
        if (owned) {
            ctx.close();
        }
    }
}
