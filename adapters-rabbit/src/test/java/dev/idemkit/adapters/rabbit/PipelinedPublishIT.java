package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.TransportException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The transport's pipelined publish on the real broker (docs/ARCHITECTURE.md section 9, "Pipelined publishing"): many
 * publishes in flight, each told of its own confirm, one group's in call order; a return fails its own publish only.
 */
class PipelinedPublishIT extends RabbitITBase {

    @Test
    void manyPublishesAreInFlightAtOnceEachConfirmedAndOneGroupsArriveInCallOrder() throws Exception {
        String queue = queue("pipelined");
        int groups = 7;
        int n = 3_000;
        List<CompletableFuture<Void>> confirms = new ArrayList<>();
        java.util.concurrent.atomic.AtomicInteger unconfirmed = new java.util.concurrent.atomic.AtomicInteger();
        int mostUnconfirmed = 0;
        for (int i = 0; i < n; i++) {
            unconfirmed.incrementAndGet();
            confirms.add(transport.publishAsync(queue, OutgoingMessage.of("m-" + i, ("" + i).getBytes(StandardCharsets.UTF_8))
                    .withGroup("g-" + (i % groups))).whenComplete((ok, e) -> unconfirmed.decrementAndGet()));
            mostUnconfirmed = Math.max(mostUnconfirmed, unconfirmed.get());
        }
        CompletableFuture.allOf(confirms.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        // over 3,000 calls, at some point more than one was unconfirmed when a call returned (a blocking publish: never)
        assertThat(mostUnconfirmed).as("calls do not wait for their confirms").isGreaterThan(1);
        assertThat(ready(queue)).isEqualTo(n);

        Map<Integer, List<Integer>> byGroup = new HashMap<>();
        try (Channel ch = raw.createChannel()) {
            GetResponse r;
            while ((r = ch.basicGet(queue, true)) != null) {
                int i = Integer.parseInt(new String(r.getBody(), StandardCharsets.UTF_8));
                assertThat(r.getProps().getMessageId()).isEqualTo("m-" + i);
                byGroup.computeIfAbsent(i % groups, g -> new ArrayList<>()).add(i);
            }
        }
        assertThat(byGroup).hasSize(groups);
        byGroup.forEach((g, order) -> assertThat(order).as("group g-%d in call order", g).isSorted()
                .hasSize(n / groups + (g < n % groups ? 1 : 0)));
    }

    @Test
    void aPublishTheBrokerReturnsFailsAloneAndTheOthersInFlightAreConfirmed() throws Exception {
        String gone = queue("gone");
        String kept = queue("kept");
        try (Channel ch = raw.createChannel()) {
            ch.queueDelete(gone); // behind the transport's back: it still takes the queue as declared
        }
        List<CompletableFuture<Void>> before = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            before.add(transport.publishAsync(kept, OutgoingMessage.of("before-" + i, new byte[] {1}).withGroup("k")));
        }
        CompletableFuture<Void> returned = transport.publishAsync(gone, OutgoingMessage.of("lost?", new byte[] {2})
                .withGroup("k"));
        List<CompletableFuture<Void>> after = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            after.add(transport.publishAsync(kept, OutgoingMessage.of("after-" + i, new byte[] {3}).withGroup("k")));
        }
        assertThatThrownBy(() -> returned.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(TransportException.class).hasMessageContaining("unroutable");
        CompletableFuture.allOf(before.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
        CompletableFuture.allOf(after.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
        assertThat(ready(kept)).isEqualTo(100);
    }
}
