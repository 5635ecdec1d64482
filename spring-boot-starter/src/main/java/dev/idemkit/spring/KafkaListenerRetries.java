package dev.idemkit.spring;

import dev.idemkit.adapters.kafka.KafkaAdoptedDeliveries;
import dev.idemkit.ports.out.Subscription;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import org.aopalliance.aop.Advice;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.listener.AbstractMessageListenerContainer;
import org.springframework.kafka.listener.BatchMessageListener;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.listener.MessageListenerContainer;
import org.springframework.kafka.listener.adapter.AsyncRepliesAware;

/**
 * The idempotent {@code @KafkaListener}s' retry topics, consumed by the starter: for each listener container whose
 * topics {@link IdempotentKafkaListenerAdvice} serves, and each such topic {@code T}, a consumer of
 * {@code T.retry.<n>s} in the group {@code <listener group>.T} (the Kafka adapter's, each retry topic's partition
 * paused until its copies are due), handing every due copy to the same listener method through the same flow
 * ({@link IdempotentKafkaListenerAdvice#onRetry}). Started before the listener containers (its topics, retry and
 * dead-letter topics created first) and stopped after them.
 *
 * <p>At start it refuses, naming the listener, what it cannot make idempotent: a batch listener, an asynchronous one,
 * a listener on a topic pattern or on assigned partitions when every topic is served (its retry topics would have no
 * consumer), manual acknowledgement, auto-commit, a container running a transaction manager, a deserializer other
 * than String or bytes of its own, and a group and topic that make no valid inbox consumer name. Each served
 * container gets the error handler that never skips a record ({@link IdemkitKafkaAutoConfiguration.NeverSkip}); the
 * service's other containers keep theirs. A container of another factory (without idemkit's advice) is left alone.
 */
final class KafkaListenerRetries implements SmartLifecycle {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaListenerRetries.class);
    private final KafkaListenerEndpointRegistry registry;
    private final IdempotentKafkaListenerAdvice advice;
    private final KafkaAdoptedDeliveries deliveries;
    private final IdempotentKafkaListenerAdvice.RecordTypes types;
    private final Map<String, Object> consumerConfig;
    private final List<Subscription> subscriptions = new ArrayList<>();
    private volatile boolean running;

    /**
     * @param types the record types of Boot's consumer factory (a listener's own deserializer properties may change
     *     them)
     * @param consumerConfig the consumer factory's configuration
     */
    KafkaListenerRetries(KafkaListenerEndpointRegistry registry, IdempotentKafkaListenerAdvice advice,
            KafkaAdoptedDeliveries deliveries, IdempotentKafkaListenerAdvice.RecordTypes types,
            Map<String, Object> consumerConfig) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.advice = Objects.requireNonNull(advice, "advice");
        this.deliveries = Objects.requireNonNull(deliveries, "deliveries");
        this.types = Objects.requireNonNull(types, "types");
        this.consumerConfig = Map.copyOf(consumerConfig);
    }

    @Override
    public synchronized void start() {
        try {
            for (MessageListenerContainer container : registry.getListenerContainers()) {
                ContainerProperties props = container.getContainerProperties();
                Set<String> served = served(container, props);
                if (served.isEmpty()) {
                    continue;
                }
                String group = container.getGroupId();
                if (group == null || group.isBlank()) {
                    throw new StartupRefusal("@KafkaListener " + container.getListenerId() + " has no consumer group;"
                            + " an idempotent @KafkaListener's inbox keys and retry topics are its group's: set its"
                            + " groupId or spring.kafka.consumer.group-id");
                }
                Object listener = props.getMessageListener();
                IdempotentKafkaListenerAdvice.RecordTypes types = IdemkitKafkaAutoConfiguration.recordTypes(
                        this.types, props.getKafkaConsumerProperties(), container.getListenerId());
                for (String topic : served) {
                    advice.checkConsumerName(group, topic, container.getListenerId());
                }
                if (container instanceof AbstractMessageListenerContainer<?, ?> c) {
                    // a record the advice could not settle comes again, never skipped (served containers only: the
                    // service's other listeners keep their own error handling)
                    if (c.getCommonErrorHandler() != null && !(c.getCommonErrorHandler()
                            instanceof IdemkitKafkaAutoConfiguration.NeverSkip)) {
                        LOG.warn("@KafkaListener {}: its error handler {} is replaced by idemkit's (records idemkit"
                                + " cannot settle come again, never skipped; retries and dead letters are idemkit's)",
                                container.getListenerId(), c.getCommonErrorHandler().getClass().getName());
                    }
                    c.setCommonErrorHandler(new IdemkitKafkaAutoConfiguration.NeverSkip());
                }
                for (String topic : served) {
                    deliveries.declare(topic);
                    advice.register(group, topic);
                    subscriptions.add(deliveries.subscribeRetries(group, topic, concurrency(container),
                            d -> advice.onRetry(group, topic, d, listener, types)));
                }
                LOG.info("idemkit idempotent @KafkaListener {} (group {}) on {}: inbox in the listener's transaction,"
                        + " retries in <topic>.retry.<n>s, dead letters in <topic>.dlt", container.getListenerId(),
                        group, served);
            }
            running = true;
        } catch (RuntimeException e) {
            stop();
            throw e;
        }
    }

    /** The topics of {@code container} the advice serves; refuses a listener it cannot serve. */
    private Set<String> served(MessageListenerContainer container, ContainerProperties props) {
        String id = container.getListenerId();
        Advice[] chain = props.getAdviceChain();
        if (chain == null || !Arrays.asList(chain).contains(advice)) {
            return Set.of(); // not a container of Boot's factory (idemkit's advice is not on it): untouched
        }
        if (props.getTopicPattern() != null || props.getTopicPartitions() != null) {
            if (advice.servesEveryTopic()) {
                throw new StartupRefusal("@KafkaListener " + id + " listens on a topic pattern or on assigned"
                        + " partitions; idemkit.kafka.idempotent-listeners=true needs topics by name (their retry"
                        + " topics are consumed per topic): name its topics, or list the topics idemkit serves in"
                        + " idemkit.kafka.topics");
            }
            LOG.warn("@KafkaListener {} listens on a topic pattern or on assigned partitions: not idempotent (only"
                    + " listeners naming their topics are; idemkit.kafka.topics={})", id, advice.topics());
            return Set.of();
        }
        Set<String> served = new LinkedHashSet<>();
        String[] topics = props.getTopics();
        if (topics != null) {
            for (String t : topics) {
                if (advice.serves(t)) {
                    served.add(t);
                }
            }
        }
        if (served.isEmpty()) {
            return served;
        }
        Object listener = props.getMessageListener();
        if (listener instanceof BatchMessageListener<?, ?>) {
            throw new StartupRefusal("@KafkaListener " + id + " is a batch listener; idemkit's idempotent"
                    + " @KafkaListeners take one record per call: make it a record listener, or leave its topics out"
                    + " with idemkit.kafka.topics");
        }
        if (listener instanceof AsyncRepliesAware async && async.isAsyncReplies()) {
            throw new StartupRefusal("@KafkaListener " + id + " returns a CompletableFuture or a Mono; an idempotent"
                    + " @KafkaListener's effect must end when its method returns (its key commits then, and the offset"
                    + " after it): make the method synchronous, or leave its topics out with idemkit.kafka.topics");
        }
        if (props.getAckMode() == ContainerProperties.AckMode.MANUAL
                || props.getAckMode() == ContainerProperties.AckMode.MANUAL_IMMEDIATE) {
            throw new StartupRefusal("@KafkaListener " + id + " acknowledges manually; an idempotent @KafkaListener's"
                    + " offset is committed by its container once idemkit settled the record (a duplicate never"
                    + " reaches the method to acknowledge it): set spring.kafka.listener.ack-mode to batch or record");
        }
        if (autoCommit(props) || autoCommit(consumerConfig)) {
            throw new StartupRefusal("@KafkaListener " + id + "'s consumer commits offsets on its own"
                    + " (enable.auto.commit=true): an offset could pass a record before idemkit settled it; set"
                    + " spring.kafka.consumer.enable-auto-commit=false");
        }
        if (props.getKafkaAwareTransactionManager() != null || props.getTransactionManager() != null) {
            throw new StartupRefusal("@KafkaListener " + id + "'s container runs a transaction manager; an idempotent"
                    + " @KafkaListener runs each record in a database transaction of its own, committed before the"
                    + " offset: remove the container's transaction manager");
        }
        return served;
    }

    /** How many threads the container runs its listener on (1 for a container of one consumer). */
    private static int concurrency(MessageListenerContainer container) {
        return container instanceof ConcurrentMessageListenerContainer<?, ?> c ? Math.max(1, c.getConcurrency()) : 1;
    }

    private static boolean autoCommit(ContainerProperties props) {
        Properties p = props.getKafkaConsumerProperties();
        return p != null && "true".equalsIgnoreCase(String.valueOf(p.getOrDefault(
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false")).trim());
    }

    private static boolean autoCommit(Map<String, Object> config) {
        return "true".equalsIgnoreCase(String.valueOf(config.getOrDefault(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                "false")).trim());
    }

    @Override
    public synchronized void stop() {
        running = false;
        for (Subscription s : subscriptions) {
            try {
                s.close();
            } catch (RuntimeException e) {
                LOG.warn("closing a retry consumer failed ({}): its unsettled copies come again", e.toString());
            }
        }
        subscriptions.clear();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Before the listener containers start (the registry's phase), after they stop. */
    @Override
    public int getPhase() {
        return registry.getPhase() - 1;
    }
}
