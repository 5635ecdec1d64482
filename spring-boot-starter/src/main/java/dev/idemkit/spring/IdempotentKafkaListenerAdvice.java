package dev.idemkit.spring;

import dev.idemkit.adapters.kafka.KafkaAdoptedDeliveries;
import dev.idemkit.adapters.postgres.JoinedUnitOfWork;
import dev.idemkit.domain.retry.FailureClass;
import dev.idemkit.domain.retry.FailureClassifier;
import dev.idemkit.domain.retry.RandomSource;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.ports.service.ConsumerSettings;
import dev.idemkit.ports.service.DeliveryFlow;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.kafka.listener.AcknowledgingConsumerAwareMessageListener;
import org.springframework.kafka.listener.ListenerExecutionFailedException;
import org.springframework.kafka.listener.MessageListener;
import org.springframework.kafka.support.converter.ConversionException;
import org.springframework.messaging.converter.MessageConversionException;
import org.springframework.messaging.handler.invocation.MethodArgumentResolutionException;

/**
 * Makes every {@code @KafkaListener} of a container factory idempotent: a front door of idemkit's one delivery flow
 * ({@link DeliveryFlow}, docs/ARCHITECTURE.md sections 13 and 14), the counterpart of the RabbitMQ listeners'
 * {@link IdempotentListenerAdvice}. Added to the factory's advice chain, it turns each record into a delivery of the
 * Kafka adapter ({@link KafkaAdoptedDeliveries#adopt}) and runs it through the flow, the listener method being the
 * effect, in a transaction of its own ({@link ListenerInbox}), keyed by (the consumer group, the topic, the
 * {@code message_id} header):
 * <ul>
 *   <li>a record delivered again (same id, same value) returns without calling the method;</li>
 *   <li>a failing method rolls back key and writes; a copy waits in {@code <topic>.retry.<n>s} for the
 *       {@link RetryPolicy}'s backoff, consumed by the starter ({@link KafkaListenerRetries}) and handed to the same
 *       method through {@link #onRetry}, so the topic's partition goes on meanwhile; after {@code maxAttempts}, or at
 *       once for a record without an id, too large, an id reused with another value, a value the method's parameters
 *       cannot be converted from, or a non-retryable failure, it goes to {@code <topic>.dlt} with the reason and every
 *       attempt, in the adapter's vocabulary ({@code idemkit dlq} and the console read and redrive it);</li>
 *   <li>the container commits the offset once this returns: after the transaction committed, or after the retry or
 *       dead-letter copy was acked by the broker. A copy that cannot be written throws {@link GivenBack}: the
 *       container's error handler (the starter's, which never skips a record) seeks back to it and it comes again.</li>
 * </ul>
 * A crash before the container's offset commit leaves the record to be fetched again, and the inbox absorbs it.
 */
public final class IdempotentKafkaListenerAdvice implements MethodInterceptor {
    private final InboxStore<JoinedUnitOfWork> inbox;
    private final KafkaAdoptedDeliveries deliveries;
    private final RetryPolicy policy;
    private final Set<String> topics;
    private final RandomSource random;
    private final Clock clock;
    private final ConsumerEvents events;
    private final int maxBodyBytes;
    private final Map<String, DeliveryFlow> flows = new ConcurrentHashMap<>();
    private final Set<String> registered = ConcurrentHashMap.newKeySet();
    private final Set<String> unregisteredWarned = ConcurrentHashMap.newKeySet();
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(IdempotentKafkaListenerAdvice.class);
    /** Set while {@link #onRetry} calls the listener on this thread. */
    private static final ThreadLocal<Boolean> RETRYING = new ThreadLocal<>();

    IdempotentKafkaListenerAdvice(InboxStore<JoinedUnitOfWork> inbox, KafkaAdoptedDeliveries deliveries,
            RetryPolicy policy, Set<String> topics, RandomSource random, Clock clock, ConsumerEvents events,
            int maxBodyBytes) {
        this.inbox = Objects.requireNonNull(inbox, "inbox");
        this.deliveries = Objects.requireNonNull(deliveries, "deliveries");
        this.policy = Objects.requireNonNull(policy, "policy").withClassifier(classifier(policy.classifier()));
        this.topics = Set.copyOf(topics);
        this.random = Objects.requireNonNull(random, "random");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.events = Objects.requireNonNull(events, "events");
        this.maxBodyBytes = maxBodyBytes;
    }

    /** A value the listener's parameters cannot be made from is malformed input: it will not get better. */
    private static FailureClassifier classifier(FailureClassifier base) {
        return failure -> {
            for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
                if (t instanceof MessageConversionException || t instanceof MethodArgumentResolutionException
                        || t instanceof ConversionException) {
                    return FailureClass.NON_RETRYABLE;
                }
            }
            return base.classify(failure);
        };
    }

    /** Whether this advice handles the listeners of {@code topic} (never one of idemkit's own topics). */
    boolean serves(String topic) {
        return topic != null && KafkaAdoptedDeliveries.isWorkTopic(topic) && (topics.isEmpty()
                || topics.contains(topic));
    }

    boolean servesEveryTopic() {
        return topics.isEmpty();
    }

    Set<String> topics() {
        return topics;
    }

    /**
     * {@code group}'s listener of {@code topic} has its retry consumer ({@link KafkaListenerRetries}): its records go
     * through the flow. Records of a group and topic never registered (a listener on a pattern, when
     * {@code idemkit.kafka.topics} lists the served topics) pass through as they would without idemkit.
     */
    /** Refuses the start when {@code group} and {@code topic} make no valid inbox consumer name. */
    void checkConsumerName(String group, String topic, String listenerId) {
        try {
            dev.idemkit.domain.ConsumerName.of(consumerOf(group, topic));
        } catch (RuntimeException e) {
            throw new StartupRefusal("@KafkaListener " + listenerId + ": group " + group + " and topic " + topic
                    + " make no valid inbox consumer name (" + e.getMessage() + "): use a group id of visible ASCII,"
                    + " with the topic at most 255 characters together");
        }
    }

    void register(String group, String topic) {
        registered.add(group + "\u0000" + topic);
    }

    /**
     * The inbox consumer of a group's idempotent listener of a topic: its own namespace, so that a listener calling
     * {@link IdempotentInbox} itself never meets the advice's own uncommitted key.
     */
    static String consumerOf(String group, String topic) {
        return "kafka-listener/" + group + "/" + topic;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        if (RETRYING.get() != null) {
            return invocation.proceed(); // a retry copy's call of the listener, already inside the flow (onRetry)
        }
        Object[] args = invocation.getArguments();
        if (args.length < 1 || !(args[0] instanceof ConsumerRecord<?, ?> record) || !serves(record.topic())) {
            return invocation.proceed(); // not a record of a served topic (a batch listener is refused at start-up)
        }
        String group = args.length >= 3 && args[2] instanceof Consumer<?, ?> consumer
                ? consumer.groupMetadata().groupId() : null;
        if (group == null || !registered.contains(group + "\u0000" + record.topic())) {
            // a container KafkaListenerRetries did not set up (created after the start, or not naming its topics):
            // it runs as it would without idemkit, and says so once
            if (unregisteredWarned.add(group + "\u0000" + record.topic())) {
                LOG.warn("a record of topic {} (group {}) reached idemkit's listener advice in a container it did not"
                        + " set up at start: NOT idempotent, passed through (create listener containers before the"
                        + " start, naming their topics)", record.topic(), group);
            }
            return invocation.proceed();
        }
        ConsumerRecord<byte[], byte[]> raw = raw(record);
        KafkaAdoptedDeliveries.Adopted adopted = deliveries.adopt(group, raw);
        Delivery delivery = adopted.delivery();
        // a redrive copy carries its producer's headers under idemkit's prefix: the listener reads them as at first
        ConsumerRecord<?, ?> forListener = KafkaAdoptedDeliveries.workRecord(delivery) == raw ? null
                : typed(KafkaAdoptedDeliveries.workRecord(delivery), record);
        run(group, record.topic(), delivery, () -> proceedOnce(invocation, forListener));
        if (adopted.givenBack() || !adopted.settled()) {
            throw new GivenBack("record " + record.topic() + "-" + record.partition() + "@" + record.offset()
                    + " not settled (its copy could not be written): given back, it comes again", null);
        }
        return null;
    }

    /**
     * A retry copy of {@code topic} for {@code group}'s listener, due now: the same flow, the listener called as the
     * container would call it, with the record as it was on the topic. Settled with the retry topic's offset; an
     * exception leaves it to the retry subscription, which fetches it again.
     */
    void onRetry(String group, String topic, Delivery delivery, Object listener, RecordTypes types) {
        ConsumerRecord<?, ?> record = types.typed(KafkaAdoptedDeliveries.workRecord(delivery));
        run(group, topic, delivery, () -> {
            // the container's listener carries its advice chain, this one included: it lets the call through
            RETRYING.set(Boolean.TRUE);
            try {
                callListener(listener, record);
            } finally {
                RETRYING.remove();
            }
        });
    }

    private void run(String group, String topic, Delivery delivery, ListenerCall call) {
        try {
            flows.computeIfAbsent(group + "\u0000" + topic, k -> flow(group, topic)).run(delivery, inbox,
                    (m, work) -> call.run());
        } catch (RuntimeException unsettled) {
            throw new GivenBack("record of " + topic + " not settled (given back): " + unsettled.getMessage(),
                    unsettled);
        }
    }

    private DeliveryFlow flow(String group, String topic) {
        ConsumerSettings settings = ConsumerSettings.defaults(consumerOf(group, topic)).withRetryPolicy(policy)
                .withMaxBodyBytes(maxBodyBytes);
        return new DeliveryFlow(settings, random, clock, events);
    }

    /** The listener once more, with {@code record} in place of the container's (null: the container's own). */
    private static void proceedOnce(MethodInvocation invocation, ConsumerRecord<?, ?> record) throws Exception {
        try {
            if (invocation instanceof ProxyMethodInvocation proxy) {
                Object[] args = invocation.getArguments().clone();
                if (record != null) {
                    args[0] = record;
                }
                proxy.invocableClone(args).proceed();
            } else if (record == null) {
                invocation.proceed();
            } else {
                throw new IllegalStateException("a listener's invocation cannot be called again with another record ("
                        + invocation.getClass().getName() + ")");
            }
        } catch (Throwable t) {
            throw unwrapped(t);
        }
    }

    /** The container's message listener (the {@code @KafkaListener} method's adapter), called with one record. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void callListener(Object listener, ConsumerRecord<?, ?> record) throws Exception {
        try {
            if (listener instanceof AcknowledgingConsumerAwareMessageListener l) {
                l.onMessage(record, null, null);
            } else if (listener instanceof MessageListener l) {
                l.onMessage(record);
            } else {
                throw new IllegalStateException("not a record listener: " + listener);
            }
        } catch (Throwable t) {
            throw unwrapped(t);
        }
    }

    /**
     * What the method threw, unwrapped from Spring Kafka's {@link ListenerExecutionFailedException} so that the
     * attempt records the method's own failure (a conversion failure is classified as malformed input either way).
     */
    private static Exception unwrapped(Throwable t) throws Exception {
        if (t instanceof Error e) {
            throw e;
        }
        Throwable failure = t;
        while (failure instanceof ListenerExecutionFailedException && failure.getCause() != null) {
            failure = failure.getCause();
        }
        if (failure instanceof Exception e) {
            return e;
        }
        if (failure instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(failure);
    }

    /** The record with its key and value as bytes (a String as UTF-8), as idemkit keys, fingerprints and copies it. */
    private static ConsumerRecord<byte[], byte[]> raw(ConsumerRecord<?, ?> r) {
        return new ConsumerRecord<>(r.topic(), r.partition(), r.offset(), r.timestamp(), r.timestampType(),
                r.serializedKeySize(), r.serializedValueSize(), bytes(r.key(), "key"), bytes(r.value(), "value"),
                r.headers(), r.leaderEpoch());
    }

    private static byte[] bytes(Object o, String what) {
        if (o == null || o instanceof byte[]) {
            return (byte[]) o;
        }
        if (o instanceof String s) {
            return s.getBytes(StandardCharsets.UTF_8);
        }
        throw new IllegalStateException("an idempotent @KafkaListener's record " + what + " must be a String or a"
                + " byte[] (StringDeserializer or ByteArrayDeserializer), got " + o.getClass().getName());
    }

    /** {@code r} with its key and value as the types of {@code like}'s (String or byte[]). */
    private static ConsumerRecord<?, ?> typed(ConsumerRecord<byte[], byte[]> r, ConsumerRecord<?, ?> like) {
        return new RecordTypes(like.key() instanceof String, like.value() instanceof String).typed(r);
    }

    /** Whether a listener's keys and values are Strings (its deserializers'), else bytes. */
    record RecordTypes(boolean stringKeys, boolean stringValues) {
        ConsumerRecord<?, ?> typed(ConsumerRecord<byte[], byte[]> r) {
            Object key = stringKeys && r.key() != null ? new String(r.key(), StandardCharsets.UTF_8) : r.key();
            Object value = stringValues && r.value() != null ? new String(r.value(), StandardCharsets.UTF_8)
                    : r.value();
            return new ConsumerRecord<>(r.topic(), r.partition(), r.offset(), r.timestamp(), r.timestampType(),
                    r.serializedKeySize(), r.serializedValueSize(), key, value, r.headers(), Optional.empty());
        }
    }

    @FunctionalInterface
    private interface ListenerCall {
        void run() throws Exception;
    }

    /**
     * A record the flow could not settle (its retry or dead-letter copy not acked): the container's error handler
     * seeks back to it, after a pause, and it comes again.
     */
    public static final class GivenBack extends RuntimeException {
        private static final long serialVersionUID = 1L;

        GivenBack(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
