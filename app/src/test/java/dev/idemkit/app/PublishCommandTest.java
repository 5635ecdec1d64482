package dev.idemkit.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@code idemkit publish} writes pipelined (before, one publish waited for its confirm before the next was written). */
class PublishCommandTest {
    private final List<CompletableFuture<Void>> confirms = new CopyOnWriteArrayList<>();
    private final MessageTransport pipelined = new MessageTransport() {
        @Override
        public Subscription subscribe(String queue, DeliveryHandler handler) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void publish(String queue, OutgoingMessage message) {
            throw new AssertionError("idemkit publish must not wait for each confirm");
        }

        @Override
        public CompletableFuture<Void> publishAsync(String queue, OutgoingMessage message) {
            CompletableFuture<Void> confirm = new CompletableFuture<>();
            confirms.add(confirm);
            return confirm;
        }

        @Override
        public void close() {
        }
    };

    private static List<OutgoingMessage> plan(int n) {
        List<OutgoingMessage> plan = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            plan.add(OutgoingMessage.of("m-" + i, new byte[0]));
        }
        return plan;
    }

    @Test
    void everyPublishIsWrittenBeforeAnyConfirmAndTheCommandReturnsOnceAllAreConfirmed() throws Exception {
        CompletableFuture<Void> done = CompletableFuture.runAsync(() -> PublishCommand.publishAll(pipelined, "q", plan(50)));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (confirms.size() < 50 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(confirms).as("all 50 written, none confirmed yet").hasSize(50);
        assertThat(done).isNotDone();
        confirms.forEach(c -> c.complete(null));
        done.get(10, TimeUnit.SECONDS);
    }

    @Test
    void aRefusedPublishFailsTheCommandOnceNothingIsInFlight() throws Exception {
        CompletableFuture<Void> done = CompletableFuture.runAsync(() -> PublishCommand.publishAll(pipelined, "q", plan(3)));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (confirms.size() < 3 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        confirms.get(1).completeExceptionally(new IllegalStateException("nacked by the broker"));
        confirms.get(0).complete(null);
        Thread.sleep(50);
        assertThat(done).as("m-2 is still in flight").isNotDone();
        confirms.get(2).complete(null);
        assertThatThrownBy(() -> done.get(10, TimeUnit.SECONDS)).hasRootCauseMessage("nacked by the broker");
    }
}
