package dev.idemkit.spring;

import dev.idemkit.adapters.rabbit.RabbitDeadLetterQueue;
import dev.idemkit.domain.KeyRules;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.MessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.context.SmartLifecycle;

/**
 * Before any container consumes (it runs in an earlier lifecycle phase than the listener registry): declares the
 * settle paths of every idempotent listener's queue (its retry buckets, hold queue and dead-letter queue), and refuses
 * to start the service when a listener's container cannot keep idemkit's promise:
 * <ul>
 *   <li>acknowledge mode other than AUTO: with MANUAL a duplicate or a dead-lettered message is never acknowledged
 *       (the consumer stalls once its prefetch is full) and a listener acking itself acks before the commit; with NONE
 *       a crash or a requeue loses the message;</li>
 *   <li>a transacted channel: not supported;</li>
 *   <li>a queue whose name makes no valid inbox consumer (1..255 visible ASCII with the prefix): every message would
 *       be dead-lettered;</li>
 *   <li>a queue the service declares non-durable, exclusive or auto-delete: a retry copy coming back after it is gone
 *       would be lost.</li>
 * </ul>
 */
final class IdempotentListenersCheck implements SmartLifecycle {
    private final RabbitListenerEndpointRegistry registry;
    private final Predicate<String> served;
    private final Consumer<String> declare;
    private final Set<String> queues = new LinkedHashSet<>();
    private volatile boolean running;

    private final java.util.function.Function<String, org.springframework.amqp.core.Queue> declaredQueue;

    IdempotentListenersCheck(RabbitListenerEndpointRegistry registry, Predicate<String> served,
            Consumer<String> declare) {
        this(registry, served, declare, name -> null);
    }

    /** @param declaredQueue the service's {@code Queue} bean of a name, or null */
    IdempotentListenersCheck(RabbitListenerEndpointRegistry registry, Predicate<String> served,
            Consumer<String> declare, java.util.function.Function<String, org.springframework.amqp.core.Queue> declaredQueue) {
        this.registry = registry;
        this.served = served;
        this.declare = declare;
        this.declaredQueue = declaredQueue;
    }

    @Override
    public void start() {
        List<String> problems = new ArrayList<>();
        Set<String> found = new LinkedHashSet<>();
        for (MessageListenerContainer container : registry.getListenerContainers()) {
            if (!(container instanceof AbstractMessageListenerContainer c)) {
                continue;
            }
            List<String> names = List.of(c.getQueueNames()).stream().filter(served).toList();
            if (names.isEmpty()) {
                continue;
            }
            if (c.getAcknowledgeMode() != AcknowledgeMode.AUTO) {
                problems.add("listener of " + names + " acknowledges " + c.getAcknowledgeMode()
                        + ": idempotent listeners need AUTO (idemkit acknowledges after the commit or the dead letter)");
            }
            if (c.isChannelTransacted()) {
                problems.add("listener of " + names + " has a transacted channel: not supported by idempotent listeners");
            }
            for (String q : names) {
                org.springframework.amqp.core.Queue bean = declaredQueue.apply(q);
                if (bean != null && (!bean.isDurable() || bean.isExclusive() || bean.isAutoDelete())) {
                    problems.add("queue " + q + " is declared " + (bean.isDurable() ? "" : "non-durable ")
                            + (bean.isExclusive() ? "exclusive " : "") + (bean.isAutoDelete() ? "auto-delete " : "")
                            + "by the service: a retry copy coming back to it after it is gone would be lost, and its"
                            + " inbox keys would change with its name; declare it durable, shared and kept");
                    continue;
                }
                Optional<String> bad = KeyRules.violation("inbox consumer", IdempotentListenerAdvice.consumerOf(q));
                bad.ifPresentOrElse(b -> problems.add("queue " + q + " makes no valid inbox consumer: " + b),
                        () -> found.add(q));
            }
        }
        if (!problems.isEmpty()) {
            throw new StartupRefusal("idemkit.rabbit.idempotent-listeners=true, but: " + String.join("; ", problems));
        }
        for (String q : found) {
            declare.accept(q); // a TopologyMismatchException names the queue and every differing argument
        }
        synchronized (queues) {
            queues.addAll(found);
        }
        running = true;
    }

    /** The depth of the dead-letter queue of every idempotent listener's queue (-1 where it could not be read). */
    Map<String, Long> deadLetterDepths(RabbitDeadLetterQueue dlq) {
        Map<String, Long> depths = new TreeMap<>();
        List<String> each;
        synchronized (queues) {
            each = List.copyOf(queues);
        }
        for (String q : each) {
            long depth;
            try {
                depth = dlq.depth(q);
            } catch (RuntimeException e) {
                depth = -1;
            }
            depths.put(q + ".dlq", depth);
        }
        return depths;
    }

    @Override
    public void stop() {
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Before the listener registry starts its containers. */
    @Override
    public int getPhase() {
        return registry.getPhase() - 1;
    }
}
