package dev.idemkit.adapters.sqs;

import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import dev.idemkit.ports.out.TransportException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.SendMessageRequest;

/**
 * {@link MessageTransport} on SQS. Queues are named; their URLs are resolved, and the work queue and
 * its DLQ created, idempotently on first use (FIFO when the name ends in {@code .fifo}).
 *
 * <p>The idempotency key travels in the {@code message_id} String attribute: SQS assigns its own
 * MessageId on every send, so it cannot carry the producer's key. Attempt = SQS's
 * {@code ApproximateReceiveCount}; a retry sets the message's visibility to the delay (rounded up to
 * whole seconds, at most 12 h), so the message waits in SQS and a crash loses nothing; a heartbeat
 * extends the visibility of messages whose handler still runs. FIFO publishes carry a message group id
 * (the message's, or {@value SqsDelivery#DEFAULT_GROUP}) and a deduplication id (the caller's, or the
 * hex SHA-256 of the canonical body). Thread-safe.
 */
public final class SqsMessageTransport implements MessageTransport {
    private static final Logger LOG = LoggerFactory.getLogger(SqsMessageTransport.class);
    private static final int SEND_BATCH_MAX = 10;

    private final SqsContext ctx;
    private final List<SqsSubscription> subscriptions = new CopyOnWriteArrayList<>();
    private final SqsBatchSender sender = new SqsBatchSender(this::sendChunk, SEND_BATCH_MAX);

    public SqsMessageTransport(SqsSettings settings) {
        this(settings, Clock.system());
    }

    public SqsMessageTransport(SqsSettings settings, Clock clock) {
        this(SqsClients.create(Objects.requireNonNull(settings, "settings")), settings, clock);
    }

    SqsMessageTransport(SqsClient sqs, SqsSettings settings, Clock clock) {
        this.ctx = new SqsContext(sqs, settings, Objects.requireNonNull(clock, "clock"));
        LOG.info("sqs transport endpoint={} region={} credentials={}", settings.endpoint().map(Object::toString)
                .orElse("aws"), settings.region(), settings.staticCredentials().isPresent() ? "static" : "default-chain");
    }

    /** The dead-letter queues of this transport's queues, on the same client. */
    public SqsDeadLetterQueue deadLetters() {
        return new SqsDeadLetterQueue(ctx);
    }

    @Override
    public Subscription subscribe(String queue, DeliveryHandler handler) {
        Objects.requireNonNull(handler, "handler");
        String url = url(queue);
        SqsSubscription s = new SqsSubscription(ctx, queue, url, handler);
        subscriptions.add(s);
        return s.start();
    }

    @Override
    public void publish(String queue, OutgoingMessage message) {
        String url = url(queue);
        SqsWire.Body body = SqsWire.encodeBody(message.body());
        SendMessageRequest.Builder send = SendMessageRequest.builder().queueUrl(url).messageBody(body.text())
                .messageAttributes(SqsWire.encode(message.id(), message.headers(), body.base64(), Map.of()));
        if (SqsQueues.isFifo(queue)) {
            send.messageGroupId(group(message)).messageDeduplicationId(dedupId(message));
        }
        try {
            ctx.sqs.sendMessage(send.build());
        } catch (SdkException e) {
            throw new TransportException("publish of " + message.id() + " to " + queue + " was not confirmed", e);
        }
    }

    /**
     * Publishes with {@code SendMessageBatch}, ten messages per call; returns when every one is confirmed.
     *
     * @throws TransportException naming the messages SQS did not accept (the others were sent)
     */
    public void publishBatch(String queue, List<OutgoingMessage> messages) {
        List<String> failed = new ArrayList<>();
        for (int from = 0; from < messages.size(); from += SEND_BATCH_MAX) {
            List<OutgoingMessage> chunk = messages.subList(from, Math.min(messages.size(), from + SEND_BATCH_MAX));
            sendChunk(queue, chunk).forEach((i, why) -> failed.add(chunk.get(i).id() + " (" + why + ")"));
        }
        if (!failed.isEmpty()) {
            throw new TransportException("batch publish to " + queue + " rejected " + failed);
        }
    }

    /**
     * Pipelined: the message joins the queue's next {@code SendMessageBatch} (up to ten per call, calls in parallel on
     * a standard queue, one at a time and so in call order on a FIFO queue); the future completes when SQS answered
     * for this message: done, or a {@link TransportException} with SQS's reason for refusing it, or "outcome
     * unknown" when the call itself failed. At most {@value SqsBatchSender#MAX_IN_FLIGHT} wait or are under way; a
     * caller past that waits here for a slot.
     */
    @Override
    public java.util.concurrent.CompletableFuture<Void> publishAsync(String queue, OutgoingMessage message) {
        Objects.requireNonNull(message, "message");
        try {
            url(queue); // resolved (and the queue created) on the caller's thread: a bad name fails this call alone
        } catch (RuntimeException e) {
            return java.util.concurrent.CompletableFuture.failedFuture(e);
        }
        return sender.submit(queue, message);
    }

    /** One {@code SendMessageBatch} of at most ten; per index of {@code chunk}, why SQS refused that entry. */
    private Map<Integer, String> sendChunk(String queue, List<OutgoingMessage> chunk) {
        String url = url(queue);
        boolean fifo = SqsQueues.isFifo(queue);
        List<SendMessageBatchRequestEntry> entries = new ArrayList<>(chunk.size());
        for (int i = 0; i < chunk.size(); i++) {
            OutgoingMessage m = chunk.get(i);
            SqsWire.Body body = SqsWire.encodeBody(m.body());
            Map<String, MessageAttributeValue> attributes = SqsWire.encode(m.id(), m.headers(), body.base64(), Map.of());
            SendMessageBatchRequestEntry.Builder e = SendMessageBatchRequestEntry.builder()
                    .id(Integer.toString(i)).messageBody(body.text()).messageAttributes(attributes);
            if (fifo) {
                e.messageGroupId(group(m)).messageDeduplicationId(dedupId(m));
            }
            entries.add(e.build());
        }
        try {
            SendMessageBatchResponse r = ctx.sqs.sendMessageBatch(b -> b.queueUrl(url).entries(entries));
            Map<Integer, String> refused = new java.util.HashMap<>();
            r.failed().forEach(f -> refused.put(Integer.parseInt(f.id()), f.code()
                    + (f.message() == null ? "" : ": " + f.message())));
            // an entry SQS answered neither way is not taken to be sent
            java.util.Set<Integer> answered = new java.util.HashSet<>(refused.keySet());
            r.successful().forEach(ok -> answered.add(Integer.parseInt(ok.id())));
            for (int i = 0; i < chunk.size(); i++) {
                if (!answered.contains(i)) {
                    refused.put(i, "no answer for this entry in SQS's response");
                }
            }
            return refused;
        } catch (SdkException e) {
            throw new TransportException("batch publish to " + queue + " was not confirmed", e);
        }
    }

    /** Deletes the work queue and its DLQ (tests, tear-down). Subscriptions on it should be closed first. */
    public void deleteQueues(String queue) {
        try {
            ctx.queues.delete(queue);
        } catch (SdkException e) {
            throw new TransportException("deleting " + queue + " failed", e);
        }
    }

    @Override
    public void close() {
        sender.close();
        subscriptions.forEach(SqsSubscription::close);
        subscriptions.clear();
        ctx.close();
    }

    private String url(String queue) {
        try {
            return ctx.queues.workQueue(queue);
        } catch (SdkException e) {
            throw new TransportException("cannot resolve or create queue " + queue, e);
        }
    }

    private static String group(OutgoingMessage m) {
        return m.groupId().orElse(SqsDelivery.DEFAULT_GROUP);
    }

    private static String dedupId(OutgoingMessage m) {
        return m.dedupId().orElseGet(() -> ContentDedup.of(m.body()).value());
    }
}
