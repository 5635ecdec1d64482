package dev.idemkit.adapters.sqs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link SqsMessageTransport#publishAsync} against ElasticMQ: many publishes in flight from one thread, sent as
 * {@code SendMessageBatch} calls, each caller told by its own future; a FIFO queue's groups arrive in call order.
 */
class SqsPipelinedPublishIT {
    private static EmbeddedSqs sqs;
    private static SqsMessageTransport transport;

    @BeforeAll
    static void startServer() {
        sqs = EmbeddedSqs.start();
        transport = new SqsMessageTransport(sqs.settings());
    }

    @AfterAll
    static void stopServer() {
        transport.close();
        sqs.close();
    }

    /** Receives every message of {@code queue} until {@code n} arrived; their ids in arrival order. */
    private static List<String> receive(String queue, int n) throws InterruptedException {
        List<String> got = new CopyOnWriteArrayList<>();
        try (Subscription s = transport.subscribe(queue, d -> {
            got.add(d.message().rawId());
            d.ack();
        })) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (got.size() < n && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
        }
        return got;
    }

    /** What SQS returns, receive after receive, deleting each receive's messages before the next. */
    private static List<String> receiveInOrder(String queue, int n) {
        List<String> got = new ArrayList<>();
        try (software.amazon.awssdk.services.sqs.SqsClient raw = SqsClients.create(sqs.settings())) {
            String url = raw.getQueueUrl(r -> r.queueName(queue)).queueUrl();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (got.size() < n && System.nanoTime() < deadline) {
                var batch = raw.receiveMessage(r -> r.queueUrl(url).maxNumberOfMessages(10).waitTimeSeconds(1)
                        .messageAttributeNames(SqsWire.MESSAGE_ID)).messages();
                for (var m : batch) {
                    got.add(m.messageAttributes().get(SqsWire.MESSAGE_ID).stringValue());
                    raw.deleteMessage(r -> r.queueUrl(url).receiptHandle(m.receiptHandle()));
                }
            }
        }
        return got;
    }

    @Test
    void fifteenHundredPipelinedPublishesToAFifoQueueAreConfirmedAndEachGroupArrivesInCallOrder() throws Exception {
        String queue = EmbeddedSqs.uniqueName("pipelined") + ".fifo";
        try {
            List<CompletableFuture<Void>> futures = new ArrayList<>();
            int mostUnconfirmed = 0;
            for (int i = 0; i < 1_500; i++) {
                String group = "g" + (i % 7);
                futures.add(transport.publishAsync(queue, OutgoingMessage.of(group + "-" + i,
                        ("body-" + i).getBytes(StandardCharsets.UTF_8)).withGroup(group)));
                if (i % 50 == 0) {
                    mostUnconfirmed = Math.max(mostUnconfirmed,
                            (int) futures.stream().filter(f -> !f.isDone()).count());
                }
            }
            CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            assertThat(mostUnconfirmed).as("publishes in flight at once (calls do not wait for their answer)")
                    .isGreaterThan(1);

            // read back in the queue's own order: one raw receiver, each receive deleted before the next (the
            // transport's subscription hands a receive's messages to parallel handlers, which would reorder them)
            List<String> got = receiveInOrder(queue, 1_500);
            assertThat(got).hasSize(1_500).doesNotHaveDuplicates();
            Map<String, List<Integer>> byGroup = new HashMap<>();
            for (String id : got) {
                String[] p = id.split("-");
                byGroup.computeIfAbsent(p[0], g -> new ArrayList<>()).add(Integer.parseInt(p[1]));
            }
            assertThat(byGroup).hasSize(7);
            byGroup.forEach((g, seq) -> assertThat(seq).as("group " + g + " in call order").isSorted());
        } finally {
            transport.deleteQueues(queue);
        }
    }

    @Test
    void pipelinedPublishesToAStandardQueueFromManyThreadsAllArriveOnce() throws Exception {
        String queue = EmbeddedSqs.uniqueName("pipelined-std");
        try {
            Set<String> sent = ConcurrentHashMap.newKeySet();
            List<CompletableFuture<Void>> futures = new CopyOnWriteArrayList<>();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                Thread th = new Thread(() -> {
                    for (int i = 0; i < 250; i++) {
                        String id = "t" + thread + "-" + i;
                        sent.add(id);
                        futures.add(transport.publishAsync(queue, OutgoingMessage.of(id,
                                id.getBytes(StandardCharsets.UTF_8))));
                    }
                });
                th.start();
                threads.add(th);
            }
            for (Thread t : threads) {
                t.join();
            }
            CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            assertThat(receive(queue, 1_000)).as("every publish, once").hasSize(1_000)
                    .containsExactlyInAnyOrderElementsOf(sent);
        } finally {
            transport.deleteQueues(queue);
        }
    }

    /** ElasticMQ enforces no request or message size limit: the bound itself is {@code SqsBatchSenderTest}'s. */
    @Test
    void tenLargeMessagesAndASmallOneAfterThemAllArrive() throws Exception {
        String queue = EmbeddedSqs.uniqueName("pipelined-large");
        try {
            List<CompletableFuture<Void>> large = new ArrayList<>();
            byte[] body = new byte[100 * 1024];
            java.util.Arrays.fill(body, (byte) 'x');
            for (int i = 0; i < 10; i++) {
                large.add(transport.publishAsync(queue, OutgoingMessage.of("large-" + i, body)));
            }
            CompletableFuture<Void> after = transport.publishAsync(queue, OutgoingMessage.of("small",
                    "s".getBytes(StandardCharsets.UTF_8)));
            CompletableFuture.allOf(large.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
            after.get(30, TimeUnit.SECONDS);
            assertThat(receive(queue, 11)).containsExactlyInAnyOrder("large-0", "large-1", "large-2", "large-3",
                    "large-4", "large-5", "large-6", "large-7", "large-8", "large-9", "small");
        } finally {
            transport.deleteQueues(queue);
        }
    }

    @Test
    void aPublishToAQueueThatCannotBeMadeFailsAloneAndAtOnce() {
        CompletableFuture<Void> bad = transport.publishAsync("not a queue name!", OutgoingMessage.of("m-1",
                "x".getBytes(StandardCharsets.UTF_8)));
        assertThat(bad).failsWithin(Duration.ofSeconds(10));
    }
}
