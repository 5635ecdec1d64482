package dev.idemkit.adapters.sqs;

import dev.idemkit.domain.retry.RandomSource;
import dev.idemkit.ports.memory.InMemoryCounter;
import dev.idemkit.ports.memory.InMemoryInboxStore;
import dev.idemkit.ports.memory.InMemoryUnitOfWork;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import dev.idemkit.ports.service.ConsumerRuntime;
import dev.idemkit.ports.service.ConsumerSettings;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * End-to-end throughput on embedded ElasticMQ: publish (SendMessageBatch of 10, or one SendMessage
 * each) -> receive (up to 10 per call, or 1) -> consumer runtime with an in-memory inbox and a counter
 * effect -> delete (DeleteMessageBatch, or one DeleteMessage each), at 1 and 4 consumers (one
 * subscription, i.e. one long-polling receiver with its own 10 handler threads, per consumer).
 * Reports messages per second and the batching gain measured in the same run. A main class, not a
 * test: it is not part of verify; the module README has the command.
 */
public final class SqsThroughputBenchmark {
    private static final int MESSAGES = Integer.getInteger("sqs.bench.messages", 1500);
    private static final int WARM_UP = 200;

    private SqsThroughputBenchmark() {}

    public static void main(String[] args) {
        long began = System.nanoTime();
        try (EmbeddedSqs sqs = EmbeddedSqs.start()) {
            run(sqs, true, 1, WARM_UP);
            run(sqs, false, 1, WARM_UP);
            List<String> lines = new ArrayList<>();
            lines.add(String.format(Locale.ROOT, "%-9s %-9s %10s", "consumers", "batching", "msg/s"));
            double[][] rate = new double[2][2];
            int[] consumers = {1, 4};
            for (int c = 0; c < 2; c++) {
                for (int b = 0; b < 2; b++) {
                    rate[c][b] = run(sqs, b == 0, consumers[c], MESSAGES);
                    lines.add(String.format(Locale.ROOT, "%-9d %-9s %10.0f", consumers[c], b == 0 ? "on" : "off",
                            rate[c][b]));
                }
            }
            for (int c = 0; c < 2; c++) {
                lines.add(String.format(Locale.ROOT, "batching gain at %d consumer(s): %.2fx", consumers[c],
                        rate[c][0] / rate[c][1]));
            }
            lines.add(String.format(Locale.ROOT, "4 vs 1 consumers: %.2fx with batching, %.2fx without",
                    rate[1][0] / rate[0][0], rate[1][1] / rate[0][1]));
            lines.add(String.format(Locale.ROOT, "%d messages per case, whole run %.0f s", MESSAGES,
                    (System.nanoTime() - began) / 1e9));
            lines.addAll(publishPaths(sqs));
            if (Boolean.parseBoolean(System.getProperty("sqs.bench.relay", "true"))) {
                lines.addAll(relayPaths(sqs));
            }
            lines.forEach(System.out::println);
        }
    }

    /**
     * Publishing alone, the transport's three ways, 2 rounds interleaved (a fresh standard queue per case): one thread
     * with {@code publishBatch} (SendMessageBatch of 10, the baseline), 8 threads with the blocking {@code publish}, one
     * thread with the pipelined {@code publishAsync} (what the outbox relay uses).
     */
    private static List<String> publishPaths(EmbeddedSqs sqs) {
        int n = Integer.getInteger("sqs.bench.publishes", 5_000);
        List<String> out = new ArrayList<>();
        out.add(String.format(Locale.ROOT, "publish paths, %d messages each, x = / publishBatch of the same round", n));
        try (SqsMessageTransport transport = new SqsMessageTransport(sqs.settings())) {
            for (int round = 1; round <= 2; round++) {
                double batch = publishRate(transport, n, "batch");
                double blocking = publishRate(transport, n, "blocking");
                double async = publishRate(transport, n, "async");
                out.add(String.format(Locale.ROOT, "round %d: publishBatch 1 thread %,.0f/s | publish 8 threads %,.0f/s"
                        + " (%.2fx) | publishAsync 1 thread %,.0f/s (%.2fx)", round, batch, blocking, blocking / batch,
                        async, async / batch));
            }
        }
        return out;
    }

    /**
     * The outbox relay as shipped on this transport (PostgreSQL outbox, {@code OutboxRelay} defaults, publishAsync), every
     * row its own key and 64 keys, against publishBatch (SendMessageBatch of 10) and publishAsync from one thread in the
     * same round, 2 rounds interleaved after a warm-up; needs PostgreSQL (a schema of its own, dropped at the end).
     */
    private static List<String> relayPaths(EmbeddedSqs sqs) {
        int n = Integer.getInteger("sqs.bench.publishes", 5_000);
        List<String> out = new ArrayList<>();
        out.add(String.format(Locale.ROOT, "outbox relay on SQS, %d rows each, x = / publishBatch of the same round", n));
        try (SqsMessageTransport transport = new SqsMessageTransport(sqs.settings())) {
            dev.idemkit.adapters.postgres.RelayDrain.onTestDatabase(drain -> {
                try {
                    relayRate(drain, transport, n, n); // warm-up: the relay's first run (JIT, the statements' plans)
                    for (int round = 1; round <= 2; round++) {
                        double batch = publishRate(transport, n, "batch");
                        double async = publishRate(transport, n, "async");
                        double ownKeys = relayRate(drain, transport, n, n);
                        double keys64 = relayRate(drain, transport, n, 64);
                        out.add(String.format(Locale.ROOT, "round %d: publishBatch 1 thread %,.0f/s | publishAsync 1 thread"
                                + " %,.0f/s (%.2fx) | relay, every row its own key %,.0f/s (%.2fx) | relay, 64 keys %,.0f/s"
                                + " (%.2fx)", round, batch, async, async / batch, ownKeys, ownKeys / batch, keys64,
                                keys64 / batch));
                    }
                    return null;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            });
        }
        return out;
    }

    private static double relayRate(dev.idemkit.adapters.postgres.RelayDrain drain, SqsMessageTransport transport, int n,
            int keys) throws InterruptedException {
        String queue = EmbeddedSqs.uniqueName("bench-relay");
        transport.publish(queue, OutgoingMessage.of("warm", bytes("warm"))); // creates the queues
        try {
            // through the tracing decorator, as serve wires its relay (no tracing configured)
            return drain.drain(dev.idemkit.app.tracing.Tracing.none().publishing(transport), queue, n, keys,
                    dev.idemkit.ports.service.OutboxRelay.Settings.defaults()).rate();
        } finally {
            transport.deleteQueues(queue);
        }
    }

    private static double publishRate(SqsMessageTransport transport, int n, String how) {
        String queue = EmbeddedSqs.uniqueName("bench-publish-" + how);
        transport.publish(queue, OutgoingMessage.of("warm", bytes("warm"))); // creates the queues
        List<OutgoingMessage> messages = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            messages.add(OutgoingMessage.of(how + "-" + i, bytes("{\"n\":" + i + "}")));
        }
        long start = System.nanoTime();
        try {
            switch (how) {
                case "batch" -> transport.publishBatch(queue, messages);
                case "blocking" -> {
                    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
                    List<java.util.concurrent.Future<?>> done = new ArrayList<>();
                    for (int t = 0; t < 8; t++) {
                        int from = t;
                        done.add(pool.submit(() -> {
                            for (int i = from; i < n; i += 8) {
                                transport.publish(queue, messages.get(i));
                            }
                        }));
                    }
                    for (java.util.concurrent.Future<?> f : done) {
                        f.get();
                    }
                    pool.shutdown();
                }
                default -> {
                    List<java.util.concurrent.CompletableFuture<Void>> futures = new ArrayList<>(n);
                    for (OutgoingMessage m : messages) {
                        futures.add(transport.publishAsync(queue, m));
                    }
                    java.util.concurrent.CompletableFuture.allOf(futures.toArray(
                            java.util.concurrent.CompletableFuture[]::new)).get();
                }
            }
        } catch (Exception e) {
            throw new IllegalStateException(how + " publishing failed", e);
        }
        double rate = n / ((System.nanoTime() - start) / 1e9);
        transport.deleteQueues(queue);
        return rate;
    }

    /** Messages per second from the first publish until the last effect; asserts nothing was lost. */
    private static double run(EmbeddedSqs sqs, boolean batching, int consumers, int messages) {
        SqsSettings settings = sqs.settings().withBatchSize(batching ? 10 : 1).withMaxConcurrentHandlers(10);
        String queue = EmbeddedSqs.uniqueName("bench");
        InMemoryCounter counter = new InMemoryCounter();
        AtomicLong lastEffect = new AtomicLong();
        try (SqsMessageTransport transport = new SqsMessageTransport(settings)) {
            ConsumerRuntime<InMemoryUnitOfWork> runtime = new ConsumerRuntime<>(ConsumerSettings.defaults("bench"),
                    new InMemoryInboxStore(), (m, work) -> {
                        counter.add(work, "n", 1);
                        work.onCommit(() -> lastEffect.set(System.nanoTime()));
                    }, RandomSource.fixed(0.5), Clock.system(), ConsumerEvents.none());
            List<Subscription> subs = new ArrayList<>();
            transport.publish(queue, OutgoingMessage.of("warm", bytes("warm"))); // creates the queues
            for (int i = 0; i < consumers; i++) {
                subs.add(transport.subscribe(queue, runtime));
            }
            while (counter.read("n") < 1) {
                Thread.onSpinWait();
            }
            long start = System.nanoTime();
            List<OutgoingMessage> batch = new ArrayList<>();
            for (int i = 0; i < messages; i++) {
                OutgoingMessage m = OutgoingMessage.of("m-" + i, bytes("{\"order\":" + i + ",\"amount\":\"10.00\"}"));
                if (batching) {
                    batch.add(m);
                    if (batch.size() == 10) {
                        transport.publishBatch(queue, batch);
                        batch.clear();
                    }
                } else {
                    transport.publish(queue, m);
                }
            }
            if (!batch.isEmpty()) {
                transport.publishBatch(queue, batch);
            }
            long deadline = System.nanoTime() + 120_000_000_000L;
            while (counter.read("n") < messages + 1L && System.nanoTime() < deadline) {
                pause();
            }
            if (counter.read("n") != messages + 1L) {
                throw new IllegalStateException("lost messages: " + counter.read("n") + " effects of " + (messages + 1));
            }
            double seconds = (lastEffect.get() - start) / 1e9;
            subs.forEach(Subscription::close);
            transport.deleteQueues(queue);
            return messages / seconds;
        }
    }

    private static void pause() {
        try {
            Thread.sleep(2);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
