package dev.idemkit.spring;

import dev.idemkit.adapters.kafka.KafkaAdoptedDeliveries;
import dev.idemkit.adapters.postgres.JoinedUnitOfWork;
import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.Jitter;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.spring.kafkasample.KafkaCredits;
import dev.idemkit.spring.kafkasample.KafkaSampleService;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Set;
import javax.sql.DataSource;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Import;
import org.springframework.context.event.EventListener;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * The Kafka sample service's listener ({@link KafkaCredits}) in a JVM of its own, run by {@link KafkaListenerCrashIT}
 * and SIGKILLed from outside at a named point of the idempotent {@code @KafkaListener}'s settle path (the points and
 * their arming are {@link SpringCrashChild}'s):
 * <ul>
 *   <li>{@code INSIDE_EFFECT}: the credit's writes ran in the listener's transaction, nothing is committed;</li>
 *   <li>{@code AFTER_COMMIT_BEFORE_ACK}: key and credit committed; the container has not committed the offset (the
 *       flow's decided hook, which runs before the listener returns to its container);</li>
 *   <li>{@code RETRY_REPUBLISHED_BEFORE_ACK}: a failed attempt's copy is acked in the retry topic; the record's offset
 *       is not committed.</li>
 * </ul>
 * {@code -Didemkit.crash.broken=async-commit} is the deliberately broken build: the effect's transaction commits on
 * another thread after the listener returned, so the container commits the offset before the effect.
 */
@org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
@Import(KafkaSampleService.class)
public class KafkaCrashChild {
    private static final PrintStream OUT = System.out;

    public static void main(String[] args) {
        boolean broken = "async-commit".equals(System.getProperty("idemkit.crash.broken"));
        KafkaCredits.insideEffect = () -> {
            if (broken) {
                // the bite must not depend on a race: the broken container's offset commit has to have landed before
                // the kill (under load it came after it, and nothing was lost: a CI flake of the full tier)
                awaitCommittedToEnd(arg(args, "spring.kafka.bootstrap-servers"), arg(args, "sample.group"),
                        arg(args, "sample.topic"), Duration.ofSeconds(20));
            }
            SpringCrashChild.reached(SpringCrashChild.INSIDE_EFFECT);
        };
        SpringApplication app = new SpringApplication(KafkaCrashChild.class);
        app.setBannerMode(org.springframework.boot.Banner.Mode.OFF);
        app.run(args);
    }

    private static String arg(String[] args, String name) {
        for (String a : args) {
            if (a.startsWith("--" + name + "=")) {
                return a.substring(name.length() + 3);
            }
        }
        throw new IllegalArgumentException("--" + name + " is required");
    }

    /**
     * Waits, bounded, until {@code group} has committed {@code topic} to its end (the broken build's container commits
     * the offsets of records whose effects still run); says so on standard error when the wait ran out.
     */
    static void awaitCommittedToEnd(String bootstrap, String group, String topic, Duration limit) {
        java.util.Properties p = new java.util.Properties();
        p.put("bootstrap.servers", bootstrap);
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(p)) {
            long deadline = System.nanoTime() + limit.toNanos();
            while (System.nanoTime() < deadline) {
                long lag = lag(admin, group, topic);
                if (lag == 0) {
                    return;
                }
                Thread.sleep(50);
            }
            System.err.println("the broken build's offsets were not committed within " + limit);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Records of {@code topic} that {@code group} has not committed. */
    static long lag(org.apache.kafka.clients.admin.Admin admin, String group, String topic)
            throws InterruptedException, java.util.concurrent.ExecutionException {
        var committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
        var ask = new java.util.HashMap<org.apache.kafka.common.TopicPartition,
                org.apache.kafka.clients.admin.OffsetSpec>();
        admin.describeTopics(java.util.List.of(topic)).allTopicNames().get().get(topic).partitions()
                .forEach(i -> ask.put(new org.apache.kafka.common.TopicPartition(topic, i.partition()),
                        org.apache.kafka.clients.admin.OffsetSpec.latest()));
        long lag = 0;
        for (var e : admin.listOffsets(ask).all().get().entrySet()) {
            var c = committed.get(e.getKey());
            lag += e.getValue().offset() - (c == null ? 0 : c.offset());
        }
        return lag;
    }

    @EventListener(ApplicationReadyEvent.class)
    void ready() {
        synchronized (OUT) {
            OUT.println("READY");
            OUT.flush();
        }
    }

    /** The flow's decided hook: after the commit (processed) or the retry copy's ack, before the offset commit. */
    @Bean
    ConsumerEvents crashPoints() {
        return (consumer, decision, latency) -> {
            if (decision == ConsumerEvents.Decision.PROCESSED) {
                SpringCrashChild.reached(SpringCrashChild.AFTER_COMMIT_BEFORE_ACK);
            } else if (decision == ConsumerEvents.Decision.RETRIED) {
                SpringCrashChild.reached(SpringCrashChild.RETRY_REPUBLISHED_BEFORE_ACK);
            }
        };
    }

    /** The deliberately broken build's advice (see the class comment); the starter's own otherwise. */
    @Bean
    @Conditional(SpringCrashChild.Broken.class)
    IdempotentKafkaListenerAdvice brokenAdvice(DataSource dataSource, PlatformTransactionManager transactionManager,
            KafkaAdoptedDeliveries deliveries, ConsumerEvents crashPoints) {
        ListenerInbox inbox = new ListenerInbox(dataSource, transactionManager);
        InboxStore<JoinedUnitOfWork> asyncCommit = CrashChildren.asyncCommit(inbox);
        RetryPolicy policy = RetryPolicy.defaults().withBackoff(Backoff.exponential(Duration.ofMillis(50),
                Duration.ofMillis(200), Jitter.FULL));
        return new IdempotentKafkaListenerAdvice(asyncCommit, deliveries, policy, Set.of(), () -> 0.5,
                Clock.system(), crashPoints, 256 * 1024);
    }
}
