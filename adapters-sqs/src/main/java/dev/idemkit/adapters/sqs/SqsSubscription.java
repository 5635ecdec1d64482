package dev.idemkit.adapters.sqs;

import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.Subscription;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;

/**
 * One poller thread per subscription: long-polls for up to {@code min(batchSize, free handler slots)}
 * messages and hands each to a bounded pool of handler threads. A semaphore with
 * {@code maxConcurrentHandlers} permits is taken before receiving, so the poller never holds a message
 * that no handler can take (it would only burn its visibility timeout).
 */
final class SqsSubscription implements Subscription {
    private static final Logger LOG = LoggerFactory.getLogger(SqsSubscription.class);
    private static final AtomicInteger IDS = new AtomicInteger();

    private final SqsContext ctx;
    private final String queue;
    private final String url;
    private final DeliveryHandler handler;
    private final Semaphore slots;
    private final ExecutorService handlers;
    private final Set<SqsDelivery> inFlight = ConcurrentHashMap.newKeySet();
    private final Thread poller;
    private volatile boolean running = true;

    SqsSubscription(SqsContext ctx, String queue, String url, DeliveryHandler handler) {
        this.ctx = ctx;
        this.queue = queue;
        this.url = url;
        this.handler = handler;
        int n = ctx.settings.maxConcurrentHandlers();
        this.slots = new Semaphore(n);
        int id = IDS.incrementAndGet();
        AtomicInteger threads = new AtomicInteger();
        this.handlers = new ThreadPoolExecutor(n, n, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "idemkit-sqs-" + id + "-handler-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.poller = new Thread(this::poll, "idemkit-sqs-" + id + "-poller");
        poller.setDaemon(true);
    }

    SqsSubscription start() {
        poller.start();
        LOG.info("subscribed queue={} batch={} max_concurrent={} wait={}s", queue, ctx.settings.batchSize(),
                ctx.settings.maxConcurrentHandlers(), ctx.settings.waitTimeSeconds());
        return this;
    }

    private void poll() {
        while (running) {
            inFlight.removeIf(SqsDelivery::isSettled);
            int taken;
            try {
                slots.acquire();
                taken = 1;
                while (taken < ctx.settings.batchSize() && slots.tryAcquire()) {
                    taken++;
                }
            } catch (InterruptedException e) {
                return;
            }
            List<Message> received;
            try {
                received = receive(taken);
            } catch (SdkException e) {
                slots.release(taken);
                if (running) {
                    LOG.warn("receive failed queue={} error=\"{}\"; retrying in 1 s", queue, e.getMessage());
                    pause();
                }
                continue;
            } catch (RuntimeException e) {
                slots.release(taken);
                if (!running) {
                    return;
                }
                LOG.error("receive failed unexpectedly queue={} error=\"{}\"; retrying in 1 s", queue, e.toString());
                pause();
                continue;
            }
            slots.release(taken - received.size());
            for (Message m : received) {
                try {
                    dispatch(m);
                } catch (RuntimeException e) {
                    // nothing one message holds may stop the poller: this one comes back after its visibility
                    // timeout, and the queue's native redrive policy (if set) is the safety net
                    slots.release();
                    LOG.error("dispatch failed queue={} sqs_id={} error=\"{}\"", queue, m.messageId(), e.toString());
                }
            }
        }
    }

    private List<Message> receive(int max) {
        return ctx.sqs.receiveMessage(r -> r.queueUrl(url).maxNumberOfMessages(max)
                .waitTimeSeconds(ctx.settings.waitTimeSeconds())
                .visibilityTimeout(SqsTimes.visibilitySeconds(ctx.settings.visibilityTimeout()))
                .messageAttributeNames("All")
                .messageSystemAttributeNames(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT,
                        MessageSystemAttributeName.APPROXIMATE_FIRST_RECEIVE_TIMESTAMP,
                        MessageSystemAttributeName.SENT_TIMESTAMP, MessageSystemAttributeName.MESSAGE_GROUP_ID))
                .messages();
    }

    private void dispatch(Message m) {
        SqsDelivery delivery = new SqsDelivery(ctx, queue, url, m);
        if (!running) {
            delivery.release();
            slots.release();
            return;
        }
        inFlight.add(delivery);
        delivery.startHeartbeat();
        handlers.execute(() -> {
            try {
                Optional<String> undecodable = delivery.undecodable();
                if (undecodable.isPresent()) {
                    delivery.deadLetter("non-retryable: undecodable message: " + undecodable.get(),
                            new AttemptRecord(delivery.attempt(), ctx.clock.now(), undecodable.get()));
                } else {
                    handler.onDelivery(delivery);
                }
            } catch (RuntimeException | Error e) {
                LOG.error("handler failed without settling queue={} sqs_id={} error=\"{}\"; releasing it", queue,
                        m.messageId(), e.toString());
                safeRelease(delivery);
            } finally {
                if (delivery.isSettled()) {
                    inFlight.remove(delivery);
                }
                slots.release();
            }
        });
    }

    private void safeRelease(SqsDelivery delivery) {
        try {
            delivery.release();
        } catch (RuntimeException e) {
            LOG.warn("release failed queue={} error=\"{}\"; it comes back after its visibility timeout", queue,
                    e.getMessage());
        }
        inFlight.remove(delivery);
    }

    private void pause() {
        try {
            Thread.sleep(1_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }

    @Override
    public void close() {
        if (!running) {
            return;
        }
        running = false;
        poller.interrupt();
        handlers.shutdown();
        try {
            if (!handlers.awaitTermination(ctx.settings.closeGrace().toMillis(), TimeUnit.MILLISECONDS)) {
                LOG.warn("queue={} handlers still running after {}; releasing their messages", queue,
                        ctx.settings.closeGrace());
                handlers.shutdownNow();
            }
            poller.join(TimeUnit.SECONDS.toMillis(ctx.settings.waitTimeSeconds() + 2L));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (SqsDelivery d : inFlight) {
            if (!d.isSettled()) {
                safeRelease(d);
            }
        }
        inFlight.clear();
        LOG.info("unsubscribed queue={}", queue);
    }
}
