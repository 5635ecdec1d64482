package dev.idemkit.adapters.sqs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.ports.out.OutgoingMessage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * How {@link SqsBatchSender} cuts batches, without a server: its {@code Chunk} here answers as SQS does for a request
 * over the size limit (the whole call refused) and for a message over it (that entry refused). ElasticMQ enforces
 * neither limit, so {@code SqsPipelinedPublishIT} cannot show them.
 */
class SqsBatchSenderTest {
    private static final long MESSAGE_LIMIT = 256 * 1024;

    private final List<List<String>> calls = new CopyOnWriteArrayList<>();

    /** SQS's answers: a request over the limit fails whole; a message over the limit is refused alone. */
    private Map<Integer, String> sqs(String queue, List<OutgoingMessage> chunk) {
        long total = 0;
        Map<Integer, String> refused = new HashMap<>();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < chunk.size(); i++) {
            ids.add(chunk.get(i).id());
            total += chunk.get(i).body().length;
            if (chunk.get(i).body().length > MESSAGE_LIMIT) {
                refused.put(i, "InvalidParameterValue: message too long");
            }
        }
        calls.add(ids);
        if (chunk.size() > 1 && total > MESSAGE_LIMIT) {
            throw new IllegalStateException("BatchRequestTooLong: " + total + " bytes");
        }
        return refused;
    }

    private static OutgoingMessage sized(String id, int kib) {
        return OutgoingMessage.of(id, new byte[kib * 1024]);
    }

    @Test
    void aBatchStaysUnderTheRequestLimitAndAMessageOverItFailsAlone() throws Exception {
        try (SqsBatchSender sender = new SqsBatchSender(this::sqs, 10)) {
            List<CompletableFuture<Void>> large = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                large.add(sender.submit("q", sized("large-" + i, 100)));
            }
            CompletableFuture<Void> tooBig = sender.submit("q", sized("too-big", 300));
            CompletableFuture<Void> small = sender.submit("q", sized("small", 1));

            // before the bound: the ten went in one 1 MB request, which SQS refuses whole, and all ten failed
            CompletableFuture.allOf(large.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
            small.get(10, TimeUnit.SECONDS);
            assertThat(tooBig).failsWithin(Duration.ofSeconds(10)).withThrowableOfType(Exception.class)
                    .withMessageContaining("message too long");
            assertThat(calls).allSatisfy(call -> assertThat(call.size()).isLessThanOrEqualTo(10));
            assertThat(calls.stream().filter(c -> c.contains("too-big"))).as("the oversized one went alone")
                    .containsExactly(List.of("too-big"));
        }
    }

    @Test
    void aFifoLaneSendsInCallOrderOneCallAtATime() throws Exception {
        try (SqsBatchSender sender = new SqsBatchSender(this::sqs, 10)) {
            List<CompletableFuture<Void>> all = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                all.add(sender.submit("q.fifo", sized("m-" + i, 1)));
            }
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
            List<String> sent = calls.stream().flatMap(List::stream).toList();
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                expected.add("m-" + i);
            }
            assertThat(sent).isEqualTo(expected);
        }
    }

    @Test
    void aCallbackThatPublishesAgainWhenNoSlotIsLeftGetsTheSlotOfTheMessageItFollows() throws Exception {
        java.util.concurrent.CountDownLatch registered = new java.util.concurrent.CountDownLatch(1);
        SqsBatchSender.Chunk waitForTheCallback = (queue, chunk) -> {
            try {
                registered.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return Map.of();
        };
        try (SqsBatchSender sender = new SqsBatchSender(waitForTheCallback, 10, 1)) { // one slot in all
            CompletableFuture<Void> first = sender.submit("q.fifo", sized("first", 1));
            // runs on the lane's only thread when "first" is answered, and needs the one slot "first" holds
            CompletableFuture<Void> second = first.thenCompose(x -> sender.submit("q.fifo", sized("second", 1)));
            registered.countDown();
            // before: the slot was freed only after the callbacks, so the lane's thread waited for itself for good
            second.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void anErrorOfACallFailsItsBatchAndTheLaneGoesOn() throws Exception {
        SqsBatchSender.Chunk once = new SqsBatchSender.Chunk() {
            private boolean thrown;

            @Override
            public synchronized Map<Integer, String> send(String queue, List<OutgoingMessage> chunk) {
                if (!thrown) {
                    thrown = true;
                    throw new StackOverflowError("deep");
                }
                return Map.of();
            }
        };
        try (SqsBatchSender sender = new SqsBatchSender(once, 10)) {
            CompletableFuture<Void> first = sender.submit("q.fifo", sized("first", 1));
            assertThat(first).failsWithin(Duration.ofSeconds(10));
            // before: the lane stayed "busy" with no thread left, and this one never completed
            sender.submit("q.fifo", sized("second", 1)).get(10, TimeUnit.SECONDS);
        }
    }
}
