package dev.idemkit.spring;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.idemkit.adapters.postgres.JoinedUnitOfWork;
import dev.idemkit.adapters.rabbit.RabbitAdoptedDeliveries;
import dev.idemkit.domain.retry.FailureClass;
import dev.idemkit.domain.retry.FailureClassifier;
import dev.idemkit.domain.retry.RandomSource;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.ports.service.BatchFlow;
import dev.idemkit.ports.service.ConsumerSettings;
import dev.idemkit.ports.service.DeliveryFlow;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.amqp.ImmediateRequeueAmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.connection.ChannelProxy;
import org.springframework.amqp.rabbit.support.DefaultMessagePropertiesConverter;
import org.springframework.amqp.rabbit.support.ListenerExecutionFailedException;
import org.springframework.amqp.support.converter.MessageConversionException;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.messaging.handler.invocation.MethodArgumentResolutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes every {@code @RabbitListener} of a container factory idempotent: a front door of idemkit's one delivery flow
 * ({@link DeliveryFlow}, docs/ARCHITECTURE.md section 13). Added to the factory's advice chain, it turns each delivery
 * into a {@link Delivery} of the RabbitMQ adapter ({@link RabbitAdoptedDeliveries#adopt}) and runs it through the flow,
 * the listener method being the effect, in a transaction, keyed by (the queue, the AMQP {@code message_id}):
 * <ul>
 *   <li>a redelivered message (same id, same body) is acknowledged without calling the method;</li>
 *   <li>a failing method rolls back key and writes; the message waits in the queue's retry bucket for the
 *       {@link RetryPolicy}'s backoff (exponential, full jitter) and comes back for its next attempt, up to
 *       {@code maxAttempts}; no listener thread waits; then it goes to {@code <queue>.dlq} with the reason and every
 *       attempt, in the adapter's vocabulary, so {@code idemkit dlq} and the console list, show and redrive it;</li>
 *   <li>no message id, an invalid one, a body over the size limit, a message id reused with another body, a body the
 *       method's parameters cannot be converted from, or a non-retryable failure ({@code IllegalArgumentException},
 *       {@code NonRetryableException}) goes to the dead-letter queue at once, with its reason.</li>
 * </ul>
 * The container acknowledges the message (AUTO) only once this returns: after its transaction committed, or after its
 * retry or dead-letter copy was confirmed by the broker. A crash before that leaves it unacknowledged; the broker
 * redelivers it and the inbox makes the redelivery harmless. Attempts travel with the message, so a redelivery after a
 * crash does not start counting again. A store that fails is a failed attempt like any other. A batch listener's batch
 * goes through the one batch flow ({@link BatchFlow}): keys and the listener's call for the new messages in one
 * transaction, acknowledged together after its commit.
 */
public final class IdempotentListenerAdvice implements MethodInterceptor {
    private static final Logger LOG = LoggerFactory.getLogger(IdempotentListenerAdvice.class);
    private final InboxStore<JoinedUnitOfWork> inbox;
    private final RabbitAdoptedDeliveries deliveries;
    private final RetryPolicy policy;
    private final Set<String> queues;
    private final RandomSource random;
    private final Clock clock;
    private final ConsumerEvents events;
    private final int maxBodyBytes;
    private final Map<String, DeliveryFlow> flows = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicInteger unsettledInARow = new java.util.concurrent.atomic.AtomicInteger();
    private final DefaultMessagePropertiesConverter converter = new DefaultMessagePropertiesConverter();

    IdempotentListenerAdvice(InboxStore<JoinedUnitOfWork> inbox, RabbitAdoptedDeliveries deliveries, RetryPolicy policy,
            Set<String> queues, RandomSource random, Clock clock, ConsumerEvents events) {
        this(inbox, deliveries, policy, queues, random, clock, events, ConsumerSettings.DEFAULT_MAX_BODY_BYTES);
    }

    IdempotentListenerAdvice(InboxStore<JoinedUnitOfWork> inbox, RabbitAdoptedDeliveries deliveries, RetryPolicy policy,
            Set<String> queues, RandomSource random, Clock clock, ConsumerEvents events, int maxBodyBytes) {
        this.maxBodyBytes = maxBodyBytes;
        this.inbox = Objects.requireNonNull(inbox, "inbox");
        this.deliveries = Objects.requireNonNull(deliveries, "deliveries");
        this.policy = Objects.requireNonNull(policy, "policy").withClassifier(classifier(policy.classifier()));
        this.queues = Set.copyOf(queues);
        this.random = Objects.requireNonNull(random, "random");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.events = Objects.requireNonNull(events, "events");
    }

    /** A body the listener's parameters cannot be made from is malformed input: it will not get better. */
    private static FailureClassifier classifier(FailureClassifier base) {
        return failure -> {
            for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
                if (t instanceof MessageConversionException || t instanceof MethodArgumentResolutionException) {
                    return FailureClass.NON_RETRYABLE;
                }
            }
            return base.classify(failure);
        };
    }

    /** Whether this advice handles the listener of {@code queue}. */
    boolean serves(String queue) {
        return queue != null && (queues.isEmpty() || queues.contains(queue));
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object[] args = invocation.getArguments();
        if (args.length >= 2 && args[1] instanceof List<?> batch) {
            return invokeBatch(invocation, batch);
        }
        if (args.length < 2 || !(args[1] instanceof Message message)) {
            return invocation.proceed(); // not a delivery
        }
        String queue = message.getMessageProperties().getConsumerQueue();
        if (!serves(queue)) {
            return invocation.proceed();
        }
        // the container's channel: while it is open the container holds the delivery; once it closed (the container
        // stopped, its connection was lost) the broker has requeued it and nothing may settle it any more
        // (the physical channel behind Spring's proxy: the proxy of a direct container replaces a closed channel with
        // a new one, open but holding none of this channel's deliveries)
        BooleanSupplier held = args[0] instanceof Channel channel ? heldBy(channel) : () -> true;
        holdWhilePublishingIsBlocked(queue, message, held);
        Delivery delivery = adopt(queue, message, held);
        try {
            flows.computeIfAbsent(queue, this::flow).run(delivery, inbox, (m, work) -> proceedOnce(invocation));
            unsettledInARow.set(0);
        } catch (RuntimeException | Error unsettled) {
            // its retry or dead-letter copy could not be confirmed (the broker or idemkit's connection to it is in
            // trouble): the container gives the message back, and would have it again at once; a pause first, growing
            // while it lasts, keeps that from spinning (on a quorum queue each requeue counts against its limit)
            pause(unsettledInARow.incrementAndGet());
            if (unsettled instanceof Error error) {
                throw error;
            }
            // back to the queue whatever the container's default-requeue-rejected says: with false, a plain exception
            // here would be rejected without requeue, and the message dropped or dead-lettered by the broker unrun
            throw new ImmediateRequeueAmqpException("delivery on " + queue + " not settled (given back): "
                    + unsettled.getMessage(), unsettled);
        }
        return null;
    }

    /**
     * A batch listener's batch (Spring AMQP's consumer batching): per queue, through the one {@link BatchFlow}: every
     * key and the listener called once with the new messages (the first of each id), in ONE transaction; then the
     * container acknowledges the whole batch. What the batch cannot decide (a reused id, a failing batch, a message
     * the flow's check refuses) goes message by message through the single flow, the listener called with a list of
     * that one message, and is retried or dead-lettered on its own. If one of those could not be settled (its copy not
     * confirmed), the whole batch is given back: what committed comes back as duplicates.
     */
    private Object invokeBatch(MethodInvocation invocation, List<?> batch) throws Throwable {
        Object[] args = invocation.getArguments();
        Map<String, List<Message>> byQueue = new LinkedHashMap<>();
        for (Object o : batch) {
            if (!(o instanceof Message m)) {
                return invocation.proceed(); // not a batch of AMQP messages (already converted): not handled here
            }
            byQueue.computeIfAbsent(m.getMessageProperties().getConsumerQueue(), q -> new ArrayList<>()).add(m);
        }
        if (byQueue.keySet().stream().noneMatch(this::serves)) {
            return invocation.proceed();
        }
        BooleanSupplier held = args[0] instanceof Channel channel ? heldBy(channel) : () -> true;
        List<Message> notServed = new ArrayList<>();
        for (Map.Entry<String, List<Message>> part : byQueue.entrySet()) {
            String queue = part.getKey();
            List<Message> messages = part.getValue();
            if (!serves(queue)) {
                notServed.addAll(messages);
                continue;
            }
            holdWhilePublishingIsBlocked(queue, messages.get(0), held);
            Map<dev.idemkit.domain.Message, Message> springOf = new IdentityHashMap<>();
            DeliveryFlow flow = flows.computeIfAbsent(queue, this::flow);
            BatchFlow<JoinedUnitOfWork> batchFlow = new BatchFlow<>(flow, inbox,
                    (fresh, work) -> proceedOnce(invocation, fresh.stream().map(springOf::get).toList()),
                    (m, work) -> proceedOnce(invocation, List.of(springOf.get(m))));
            List<BatchFlow.Item> items = new ArrayList<>(messages.size());
            for (Message m : messages) {
                Delivery delivery = adopt(queue, m, held);
                springOf.put(delivery.message(), m);
                items.add(batchFlow.item(delivery));
            }
            BatchFlow.Result result = batchFlow.settle(items,
                    java.util.Collections.newSetFromMap(new IdentityHashMap<>()));
            if (result.unsettled() > 0) {
                pause(unsettledInARow.incrementAndGet());
                throw new ImmediateRequeueAmqpException(result.unsettled() + " deliveries of a batch on " + queue
                        + " not settled: the batch is given back (what committed comes back as duplicates)");
            }
            unsettledInARow.set(0);
        }
        if (!notServed.isEmpty()) {
            // last, once every served message is settled, and as Spring would call it (its failure unchanged): the
            // container's error handling of this part (a reject, an ack of a fatal x-death) then meets only
            // messages idemkit is done with
            if (!(invocation instanceof ProxyMethodInvocation proxy)) {
                throw new IllegalStateException("a batch listener's invocation cannot be called again with a part of"
                        + " its batch (" + invocation.getClass().getName() + ")");
            }
            Object[] part = args.clone();
            part[1] = notServed;
            return proxy.invocableClone(part).proceed();
        }
        return null;
    }

    /** A Spring AMQP delivery as a {@link Delivery} of the RabbitMQ adapter, acknowledged by its container. */
    private Delivery adopt(String queue, Message message, BooleanSupplier held) {
        AMQP.BasicProperties props = converter.fromMessageProperties(message.getMessageProperties(),
                StandardCharsets.UTF_8.name());
        boolean redelivered = Boolean.TRUE.equals(message.getMessageProperties().isRedelivered());
        // AUTO acknowledgement: the container acks once the advice returns normally, so a settled delivery has nothing
        // more to do; a settle that could not be confirmed throws and the container gives the message back
        Delivery delivery = deliveries.adopt(queue, props, message.getBody(), redelivered, () -> { }, held);
        // on a retry or redrive copy the producer's headers travel nested; the listener reads them where it did first
        RabbitAdoptedDeliveries.restoreApplicationHeaders(message.getMessageProperties().getHeaders());
        return delivery;
    }

    /** Whether the channel a delivery came on is still the open one it came on. */
    private static BooleanSupplier heldBy(Channel channel) {
        if (!(channel instanceof ChannelProxy proxy)) {
            return channel::isOpen;
        }
        Channel physical = proxy.getTargetChannel();
        return () -> physical != null && proxy.getTargetChannel() == physical && physical.isOpen();
    }

    /**
     * No work is taken while the broker blocks publishing (a resource alarm): a delivery that failed now could not have
     * its retry or dead letter published, and the listener's own publishes would block inside its transaction. The
     * delivery waits here, before the flow, unacknowledged; the container's prefetch fills and the broker sends this
     * consumer no more. The container stopping (its threads interrupted) or the channel closing ends the wait: the
     * broker has the delivery back, untouched.
     */
    private void holdWhilePublishingIsBlocked(String queue, Message message, BooleanSupplier held) {
        if (deliveries.awaitPublishing(() -> true)) {
            return; // publishing is open: the usual case, no wait
        }
        long tag = message.getMessageProperties().getDeliveryTag();
        LOG.warn("decision=delivery-held-by-alarm queue={} delivery_tag={} detail=\"{}; the delivery waits,"
                + " unacknowledged, until publishing is open\"", queue, tag, deliveries.health());
        long since = System.nanoTime();
        if (!deliveries.awaitPublishing(() -> !held.getAsBoolean())) {
            throw new ImmediateRequeueAmqpException("delivery " + tag + " on " + queue + " held through a"
                    + " resource alarm until its container stopped or its channel closed: not run, given back");
        }
        LOG.info("decision=delivery-released queue={} delivery_tag={} held_for={}ms", queue, tag,
                (System.nanoTime() - since) / 1_000_000);
    }

    /** {@code 500 ms * 2^(n-1)}, at most 30 s, for the {@code n}-th delivery in a row that could not be settled. */
    private static void pause(int n) {
        try {
            Thread.sleep(Math.min(30_000L, 500L << Math.min(6, n - 1)));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // stopping: the container gives the message back
        }
    }

    private DeliveryFlow flow(String queue) {
        ConsumerSettings settings = ConsumerSettings.defaults(consumerOf(queue)).withRetryPolicy(policy)
                .withMaxBodyBytes(maxBodyBytes);
        return new DeliveryFlow(settings, random, clock, events);
    }

    /**
     * The listener method once more (an advice may call it again only through a clone of the invocation), what it
     * threw unwrapped from Spring AMQP's {@link ListenerExecutionFailedException} so that the attempt records the
     * method's own failure (a conversion failure stays wrapped: it is classified as malformed input).
     */
    private static void proceedOnce(MethodInvocation invocation) throws Exception {
        proceedOnce(invocation, null);
    }

    /** The same with {@code batch} in place of the batch the container handed over (null: the invocation's own). */
    private static void proceedOnce(MethodInvocation invocation, List<Message> batch) throws Exception {
        try {
            if (invocation instanceof ProxyMethodInvocation proxy) {
                if (batch == null) {
                    proxy.invocableClone().proceed();
                } else {
                    Object[] args = invocation.getArguments().clone();
                    args[1] = batch;
                    proxy.invocableClone(args).proceed();
                }
            } else if (batch == null) {
                invocation.proceed();
            } else {
                throw new IllegalStateException("a batch listener's invocation cannot be called again with a part of"
                        + " its batch (" + invocation.getClass().getName() + ")");
            }
        } catch (Error e) {
            throw e;
        } catch (Throwable t) {
            Throwable failure = t;
            while (failure instanceof ListenerExecutionFailedException && failure.getCause() != null
                    && !(failure.getCause() instanceof MessageConversionException)) {
                failure = failure.getCause();
            }
            if (failure instanceof Exception e) {
                throw e;
            }
            if (failure instanceof Error e) {
                throw e;
            }
            throw new IllegalStateException(failure);
        }
    }

    /**
     * The inbox consumer of a queue's idempotent listener: its own namespace, so that a listener calling
     * {@link IdempotentInbox} itself with the queue's name as consumer never meets the advice's own uncommitted key
     * (it would read it as a duplicate and skip its effect).
     */
    static String consumerOf(String queue) {
        return "rabbit-listener/" + queue;
    }
}
