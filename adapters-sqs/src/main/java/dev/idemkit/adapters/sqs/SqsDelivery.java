package dev.idemkit.adapters.sqs;

import dev.idemkit.domain.DedupId;
import dev.idemkit.domain.Message;
import dev.idemkit.domain.deadletter.AttemptHistory;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.TransportException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.SendMessageRequest;

/**
 * One received SQS message. Attempt = {@code ApproximateReceiveCount}. While unsettled, a heartbeat
 * keeps extending its visibility so that a slow but live handler's message is not redelivered.
 * Settling: ack -> (batched) delete; retry -> visibility set to the delay (the message waits in SQS);
 * dead letter -> confirmed send to the DLQ with reason and history, then delete.
 */
final class SqsDelivery implements Delivery {
    private static final Logger LOG = LoggerFactory.getLogger(SqsDelivery.class);
    static final String DEFAULT_GROUP = "idemkit";

    private final SqsContext ctx;
    private final String queue;
    private final String queueUrl;
    private final software.amazon.awssdk.services.sqs.model.Message raw;
    private final Message message;
    private final int attempt;
    private final List<AttemptRecord> history;
    private final Optional<String> undecodable;
    private final AtomicBoolean settled = new AtomicBoolean();
    private final Object lock = new Object();
    private volatile ScheduledFuture<?> heartbeat;

    SqsDelivery(SqsContext ctx, String queue, String queueUrl, software.amazon.awssdk.services.sqs.model.Message raw) {
        this.ctx = ctx;
        this.queue = queue;
        this.queueUrl = queueUrl;
        this.raw = raw;
        SqsWire.Received body = SqsWire.receive(raw.body(), raw.messageAttributes());
        Message m;
        Optional<String> problem = body.problem();
        try {
            m = new Message(SqsWire.string(raw.messageAttributes(), SqsWire.MESSAGE_ID), body.bytes(),
                    SqsWire.headers(raw.messageAttributes()), queue);
        } catch (RuntimeException e) {
            // nothing a producer sends may keep a message from being settled: it becomes a dead letter with the reason
            m = new Message(SqsWire.string(raw.messageAttributes(), SqsWire.MESSAGE_ID), body.bytes(), Map.of(), queue);
            problem = Optional.of("unreadable attributes (" + e + ")");
        }
        this.message = m;
        this.undecodable = problem;
        this.attempt = Math.max(1, intAttribute(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT, 1));
        long first = longAttribute(MessageSystemAttributeName.APPROXIMATE_FIRST_RECEIVE_TIMESTAMP,
                System.currentTimeMillis());
        this.history = ctx.journal.history(raw.messageId(), attempt, Instant.ofEpochMilli(first));
    }

    void startHeartbeat() {
        long every = ctx.settings.heartbeatInterval().toMillis();
        int seconds = SqsTimes.visibilitySeconds(ctx.settings.visibilityTimeout());
        heartbeat = ctx.heartbeat.scheduleAtFixedRate(() -> {
            // under the lock, so that no extension lands after a settle changed the visibility
            synchronized (lock) {
                if (settled.get()) {
                    return;
                }
                try {
                    ctx.sqs.changeMessageVisibility(r -> r.queueUrl(queueUrl).receiptHandle(raw.receiptHandle())
                            .visibilityTimeout(seconds));
                    LOG.debug("heartbeat queue={} sqs_id={} visibility={}s", queue, raw.messageId(), seconds);
                } catch (SdkException e) {
                    LOG.warn("heartbeat failed queue={} sqs_id={} error=\"{}\"", queue, raw.messageId(),
                            e.getMessage());
                }
            }
        }, every, every, TimeUnit.MILLISECONDS);
    }

    @Override
    public Message message() {
        return message;
    }

    @Override
    public int attempt() {
        return attempt;
    }

    @Override
    public List<AttemptRecord> history() {
        return history;
    }

    @Override
    public boolean redelivered() {
        return attempt > 1;
    }

    /**
     * Why the message cannot be handed to a handler (its body is not what its encoding attribute says), or
     * empty. Such a delivery's {@link #message()} holds the body as it arrived.
     */
    Optional<String> undecodable() {
        return undecodable;
    }

    boolean isSettled() {
        return settled.get();
    }

    @Override
    public void ack() {
        settle("ack");
        ctx.journal.forget(raw.messageId());
        ctx.deleter.delete(queueUrl, raw.receiptHandle());
    }

    @Override
    public void retryAfter(Duration delay, AttemptRecord failed) {
        settle("retry");
        ctx.journal.record(raw.messageId(), failed);
        changeVisibility(SqsTimes.visibilitySeconds(delay), "retry");
    }

    @Override
    public void deadLetter(String reason, AttemptRecord failed) {
        settle("dead-letter");
        List<AttemptRecord> attempts = AttemptHistory.append(history, failed);
        Map<String, String> extras = new LinkedHashMap<>();
        extras.put(SqsWire.ORIGIN_QUEUE, queue);
        extras.put(SqsWire.REASON, reason);
        extras.put(SqsWire.ATTEMPTS, AttemptHistory.encode(attempts));
        extras.put(SqsWire.DEAD_LETTERED_AT, ctx.clock.now().toString());
        boolean base64 = raw.messageAttributes().containsKey(SqsWire.BODY_ENCODING);
        String dlqUrl = ctx.queues.deadLetterQueue(queue);
        SendMessageRequest.Builder send = SendMessageRequest.builder().queueUrl(dlqUrl).messageBody(raw.body())
                .messageAttributes(SqsWire.encodeCopy(message.rawId(), message.headers(), base64, extras));
        if (SqsQueues.isFifo(queue)) {
            String group = raw.attributes().get(MessageSystemAttributeName.MESSAGE_GROUP_ID);
            send.messageGroupId(group == null ? DEFAULT_GROUP : group)
                    .messageDeduplicationId(DedupId.ofContent(("dead-letter:" + raw.messageId())
                            .getBytes(StandardCharsets.UTF_8)).value());
        }
        try {
            ctx.sqs.sendMessage(send.build());
            ctx.sqs.deleteMessage(r -> r.queueUrl(queueUrl).receiptHandle(raw.receiptHandle()));
        } catch (SdkException e) {
            throw new TransportException("dead-lettering " + raw.messageId() + " from " + queue + " failed;"
                    + " it stays in the queue and comes back after its visibility timeout", e);
        } finally {
            ctx.journal.forget(raw.messageId());
        }
        LOG.info("dead-lettered queue={} sqs_id={} attempts={} reason=\"{}\"", queue, raw.messageId(),
                attempts.size(), reason);
    }

    /** Gives the message back to SQS at once (closing, or a handler that failed to settle). */
    void release() {
        boolean mine;
        synchronized (lock) {
            mine = settled.compareAndSet(false, true);
        }
        if (mine) {
            stopHeartbeat();
            changeVisibility(0, "release");
        }
    }

    private void settle(String how) {
        synchronized (lock) {
            if (!settled.compareAndSet(false, true)) {
                throw new IllegalStateException("delivery " + raw.messageId() + " already settled; cannot " + how);
            }
        }
        stopHeartbeat();
    }

    private void stopHeartbeat() {
        ScheduledFuture<?> h = heartbeat;
        if (h != null) {
            h.cancel(false);
        }
    }

    private void changeVisibility(int seconds, String why) {
        try {
            ctx.sqs.changeMessageVisibility(r -> r.queueUrl(queueUrl).receiptHandle(raw.receiptHandle())
                    .visibilityTimeout(seconds));
        } catch (SdkException e) {
            throw new TransportException(why + " of " + raw.messageId() + " on " + queue + " failed; it comes back"
                    + " after its visibility timeout instead", e);
        }
    }

    private int intAttribute(MessageSystemAttributeName name, int fallback) {
        return (int) Math.min(Integer.MAX_VALUE, longAttribute(name, fallback));
    }

    private long longAttribute(MessageSystemAttributeName name, long fallback) {
        String v = raw.attributes().get(name);
        try {
            return v == null ? fallback : Long.parseLong(v);
        } catch (NumberFormatException e) {
            return fallback;
        }
    }
}
