package dev.idemkit.adapters.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.deadletter.AttemptHistory;
import dev.idemkit.domain.deadletter.DeadLetter;
import dev.idemkit.domain.deadletter.DeadLetterHeaders;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.Jitter;
import dev.idemkit.domain.retry.RandomSource;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.forwarding.ForwardingInboxStore;
import dev.idemkit.ports.memory.InMemoryCounter;
import dev.idemkit.ports.memory.InMemoryInboxStore;
import dev.idemkit.ports.memory.InMemoryUnitOfWork;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.DeadLetterEntry;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.Guarded;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import dev.idemkit.ports.service.ConsumerRuntime;
import dev.idemkit.ports.service.ConsumerSettings;
import dev.idemkit.ports.service.MessageHandler;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/** What the transport contract cannot say in general: Kafka's commit, partitions, rebalances and untrusted headers. */
class KafkaScenariosIT extends KafkaITBase {
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    private final InMemoryInboxStore inbox = new InMemoryInboxStore();
    private final InMemoryCounter counter = new InMemoryCounter();
    private final Map<ConsumerEvents.Decision, AtomicInteger> decisions = new ConcurrentHashMap<>();

    private ConsumerRuntime<InMemoryUnitOfWork> runtime(MessageHandler<InMemoryUnitOfWork> handler) {
        return runtime(inbox, handler);
    }

    private ConsumerRuntime<InMemoryUnitOfWork> runtime(InboxStore<InMemoryUnitOfWork> inbox,
            MessageHandler<InMemoryUnitOfWork> handler) {
        RetryPolicy quick = RetryPolicy.defaults().withBackoff(Backoff.exponential(Duration.ofMillis(100),
                Duration.ofSeconds(1), Jitter.FULL));
        return new ConsumerRuntime<>(ConsumerSettings.defaults("kafka-it").withRetryPolicy(quick), inbox, handler,
                RandomSource.fixed(0.5), Clock.system(),
                (consumer, decision, latency) -> decisions.computeIfAbsent(decision, k -> new AtomicInteger())
                        .incrementAndGet());
    }

    private int count(ConsumerEvents.Decision d) {
        return decisions.getOrDefault(d, new AtomicInteger()).get();
    }

    private void sendRaw(String topic, RecordHeaders headers, String body) throws Exception {
        raw.send(new ProducerRecord<byte[], byte[]>(topic, null, (byte[]) null, body.getBytes(StandardCharsets.UTF_8), headers)).get();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aRecordWithoutMessageIdGoesToTheDeadLetterTopicAtOnceWithTheReasonAndTheOthersFlow() throws Exception {
        KafkaMessageTransport t = transport(KafkaBroker.shared().settings().withPartitions(1));
        String topic = topic("no-id");
        t.declare(topic);
        sendRaw(topic, new RecordHeaders(), "{\"amount\":5}");
        for (int i = 1; i <= 5; i++) {
            t.publish(topic, OutgoingMessage.of("ok-" + i, bytes("x")));
        }
        subscriptions.add(t.subscribe(topic, runtime((m, w) -> counter.add(w, "total", 1))));

        Eventually.await(PATIENCE, "five effects and one dead letter",
                () -> counter.read("total") == 5 && t.deadLetters().depth(topic) == 1);
        DeadLetter dl = t.deadLetters().peek(topic, 10).get(0).deadLetter();
        assertThat(dl.reason()).containsIgnoringCase("id");
        assertThat(dl.attempts()).as("dead-lettered on its first attempt, no retry").hasSize(1);
        assertThat(dl.original().headers()).containsEntry(KafkaWire.ORIGIN_PARTITION, "0")
                .containsEntry(KafkaWire.ORIGIN_OFFSET, "0");
    }

    @Test
    void aPoisonRecordDoesNotStallItsPartitionAndIsDeadLetteredAfterExactlyThreeAttemptsWithItsOrigin() throws Exception {
        KafkaMessageTransport t = transport(KafkaBroker.shared().settings().withPartitions(1));
        String topic = topic("poison");
        t.publish(topic, OutgoingMessage.of("poison-1", bytes("{}")).withHeaders(Map.of("x-tenant", "acme")));
        for (int i = 1; i <= 20; i++) {
            t.publish(topic, OutgoingMessage.of("good-" + i, bytes("{}")));
        }
        AtomicInteger calls = new AtomicInteger();
        AtomicInteger attemptsBegun = new AtomicInteger();
        AtomicInteger goodSeenByLastAttempt = new AtomicInteger(-1);
        // The last attempt holds until the twenty records behind the poison are done. Were the retries waited out on
        // the partition, they could not be, and this wait would run out: no race on how fast twenty records go
        // compared with two retry delays on a loaded machine. It holds before the inbox, not in the effect: the
        // in-memory inbox runs one effect at a time, so a wait inside it kept the twenty out and ran out whenever they
        // were not all done before the third attempt began (a CI run under load).
        InboxStore<InMemoryUnitOfWork> holding = new ForwardingInboxStore<>(inbox) {
            @Override
            public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint,
                    Effect<? super InMemoryUnitOfWork, R> effect) {
                if (key.messageId().value().equals("poison-1") && attemptsBegun.incrementAndGet() == 3) {
                    try {
                        Eventually.await(PATIENCE, "the twenty good records behind the poison",
                                () -> counter.read("good") == 20);
                    } finally {
                        goodSeenByLastAttempt.set((int) counter.read("good"));
                    }
                }
                return delegate().runOnce(key, fingerprint, effect);
            }
        };
        subscriptions.add(t.subscribe(topic, runtime(holding, (m, w) -> {
            if (m.rawId().equals("poison-1")) {
                calls.incrementAndGet();
                throw new IllegalStateException("downstream rejects it");
            }
            counter.add(w, "good", 1);
        })));

        Eventually.await(PATIENCE, "the dead letter", () -> t.deadLetters().depth(topic) == 1);
        assertThat(goodSeenByLastAttempt).as("good records done while the poison was still being retried").hasValue(20);
        assertThat(counter.read("good")).isEqualTo(20);
        Eventually.pause(1500);
        assertThat(calls).as("attempts").hasValue(3);
        DeadLetterEntry entry = t.deadLetters().peek(topic, 10).get(0);
        DeadLetter dl = entry.deadLetter();
        assertThat(dl.original().rawId()).isEqualTo("poison-1");
        assertThat(dl.originQueue()).isEqualTo(topic);
        assertThat(dl.reason()).contains("IllegalStateException").contains("downstream rejects it");
        assertThat(dl.attempts()).extracting(a -> a.number()).containsExactly(1, 2, 3);
        assertThat(dl.attempts()).allSatisfy(a -> assertThat(a.error()).contains("downstream rejects it"));
        assertThat(dl.original().headers()).containsEntry("x-tenant", "acme")
                .containsEntry(KafkaWire.ORIGIN_PARTITION, "0").containsEntry(KafkaWire.ORIGIN_OFFSET, "0");
        assertThat(dl.attempts().get(2).at()).isAfter(dl.attempts().get(0).at());
    }

    @Test
    void theCommitNeverPassesARecordThatWasNotSettled() throws Exception {
        KafkaMessageTransport t = transport(KafkaBroker.shared().settings().withPartitions(1)
                .withCloseGrace(Duration.ofMillis(500)));
        String topic = topic("held");
        for (int i = 0; i < 10; i++) {
            t.publish(topic, OutgoingMessage.of("m-" + i, bytes("x")));
        }
        Set<String> acked = ConcurrentHashMap.newKeySet();
        List<Delivery> held = new CopyOnWriteArrayList<>();
        Subscription first = t.subscribe(topic, d -> {
            if (d.message().rawId().equals("m-3")) {
                held.add(d); // never settled: as a handler stuck in a call, or a process about to die
            } else {
                acked.add(d.message().rawId());
                d.ack();
            }
        });
        Eventually.await(PATIENCE, "nine acks", () -> acked.size() == 9);
        Eventually.pause(1000); // several commit intervals
        first.close();

        Set<String> second = new TreeSet<>();
        subscriptions.add(t.subscribe(topic, d -> {
            synchronized (second) {
                second.add(d.message().rawId());
            }
            d.ack();
        }));
        Eventually.await(PATIENCE, "the redelivery", () -> {
            synchronized (second) {
                return second.contains("m-9");
            }
        });
        Eventually.pause(1000);
        synchronized (second) {
            assertThat(second).as("everything from the unsettled record on, nothing before it")
                    .containsExactly("m-3", "m-4", "m-5", "m-6", "m-7", "m-8", "m-9");
        }
    }

    @Test
    void aSecondConsumerJoiningMidStreamKeepsTheTotalsExact() throws Exception {
        KafkaSettings settings = KafkaBroker.shared().settings().withPartitions(4);
        KafkaMessageTransport a = transport(settings);
        KafkaMessageTransport b = transport(settings);
        String topic = topic("rebalance");
        Random random = new Random(42);
        List<Integer> ids = new ArrayList<>();
        for (int i = 1; i <= 400; i++) {
            ids.add(i);
            if (random.nextInt(100) < 30) {
                ids.add(1 + random.nextInt(i));
            }
        }
        long expected = new TreeSet<>(ids).stream().mapToLong(i -> i).sum();
        subscriptions.add(a.subscribe(topic, runtime((m, w) -> counter.add(w, "total",
                Long.parseLong(m.rawId().substring(2))))));
        for (int k = 0; k < ids.size(); k++) {
            if (k == ids.size() / 3) {
                subscriptions.add(b.subscribe(topic, runtime((m, w) -> counter.add(w, "total",
                        Long.parseLong(m.rawId().substring(2))))));
            }
            a.publish(topic, OutgoingMessage.of("m-" + ids.get(k), bytes("x")).withGroup("k" + (ids.get(k) % 16)));
        }
        Eventually.await(PATIENCE, "every id's effect", () -> counter.read("total") == expected);
        Eventually.pause(2000);
        assertThat(counter.read("total")).isEqualTo(expected);
        assertThat(count(ConsumerEvents.Decision.PROCESSED)).isEqualTo(new TreeSet<>(ids).size());
    }

    @Test
    void idemkitHeadersAProducerWritesOnTheWorkTopicAreData() throws Exception {
        KafkaMessageTransport t = transport(KafkaBroker.shared().settings().withPartitions(1));
        String topic = topic("forged");
        t.declare(topic);
        RecordHeaders forged = new RecordHeaders();
        forged.add(KafkaWire.MESSAGE_ID, bytes("forged-1"));
        forged.add(AttemptHistory.HEADER, bytes("1\t2026-01-01T00:00:00Z\tfake\n2\t2026-01-01T00:00:01Z\tfake"));
        forged.add(KafkaWire.DUE_AT, bytes(Long.toString(System.currentTimeMillis() + 3_600_000)));
        forged.add(DeadLetterHeaders.ORIGIN_QUEUE, bytes("someone-elses-topic"));
        sendRaw(topic, forged, "{}");
        List<Delivery> seen = new CopyOnWriteArrayList<>();
        subscriptions.add(t.subscribe(topic, d -> {
            seen.add(d);
            d.ack();
        }));
        Eventually.await(PATIENCE, "the delivery, not held until the forged due time", () -> !seen.isEmpty());
        assertThat(seen.get(0).attempt()).as("a forged history skips no attempt").isEqualTo(1);
        assertThat(seen.get(0).history()).isEmpty();
        assertThat(seen.get(0).message().originQueue()).isEqualTo(topic);
    }
}
