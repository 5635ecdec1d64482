package dev.idemkit.adapters.rabbit;

import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.Jitter;
import dev.idemkit.domain.retry.RandomSource;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.memory.InMemoryInboxStore;
import dev.idemkit.ports.memory.InMemoryUnitOfWork;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.service.ConsumerRuntime;
import dev.idemkit.ports.service.ConsumerSettings;
import dev.idemkit.ports.service.MessageHandler;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** The ports' consumer runtime over the in-memory inbox, with decisions counted. */
final class Consumers {
    final InMemoryInboxStore inbox = new InMemoryInboxStore();
    final Map<ConsumerEvents.Decision, AtomicInteger> decisions = new ConcurrentHashMap<>();

    /** 3 attempts, 100 ms base and 1 s cap with full jitter: the default policy, made quick. */
    static RetryPolicy quickRetries() {
        return RetryPolicy.defaults().withBackoff(Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(1),
                Jitter.FULL));
    }

    ConsumerRuntime<InMemoryUnitOfWork> runtime(ConsumerSettings settings, MessageHandler<InMemoryUnitOfWork> handler) {
        return new ConsumerRuntime<>(settings, inbox, handler, RandomSource.fixed(0.5), Clock.system(),
                (consumer, decision, latency) -> decisions.computeIfAbsent(decision, k -> new AtomicInteger())
                        .incrementAndGet());
    }

    ConsumerRuntime<InMemoryUnitOfWork> runtime(MessageHandler<InMemoryUnitOfWork> handler) {
        return runtime(ConsumerSettings.defaults("rabbit-it").withRetryPolicy(quickRetries()), handler);
    }

    int count(ConsumerEvents.Decision d) {
        return decisions.getOrDefault(d, new AtomicInteger()).get();
    }
}
