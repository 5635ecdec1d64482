package dev.idemkit.spring;

import dev.idemkit.domain.KeyRules;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.MessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.context.SmartLifecycle;

/**
 * Refuses to start the service when an idempotent listener's container cannot keep idemkit's promise, before any
 * container consumes (it runs in an earlier lifecycle phase than the listener registry):
 * <ul>
 *   <li>acknowledge mode other than AUTO: with MANUAL a duplicate or a dead-lettered message is never acknowledged
 *       (the consumer stalls once its prefetch is full) and a listener acking itself acks before the commit; with NONE
 *       a crash or a requeue loses the message;</li>
 *   <li>a transacted channel: publishes of failed attempts would commit with the successful one;</li>
 *   <li>a queue whose name makes no valid inbox consumer (1..255 visible ASCII with the prefix): every message would
 *       be dead-lettered.</li>
 * </ul>
 */
final class IdempotentListenersCheck implements SmartLifecycle {
    private final RabbitListenerEndpointRegistry registry;
    private final Set<String> queues;
    private volatile boolean running;

    IdempotentListenersCheck(RabbitListenerEndpointRegistry registry, Set<String> queues) {
        this.registry = registry;
        this.queues = Set.copyOf(queues);
    }

    @Override
    public void start() {
        List<String> problems = new ArrayList<>();
        for (MessageListenerContainer container : registry.getListenerContainers()) {
            if (!(container instanceof AbstractMessageListenerContainer c)) {
                continue;
            }
            List<String> names = List.of(c.getQueueNames()).stream()
                    .filter(q -> queues.isEmpty() || queues.contains(q)).toList();
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
                Optional<String> bad = KeyRules.violation("inbox consumer",
                        IdempotentListenerAdvice.consumerOf(q));
                bad.ifPresent(b -> problems.add("queue " + q + " makes no valid inbox consumer: " + b));
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalStateException("idemkit.rabbit.idempotent-listeners=true, but: " + String.join("; ", problems));
        }
        running = true;
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
