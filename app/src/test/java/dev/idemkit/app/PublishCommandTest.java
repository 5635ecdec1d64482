package dev.idemkit.app;

import static org.assertj.core.api.Assertions.assertThat;

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
            return confirm.whenComplete((ok, e) -> { }); // a failure arrives wrapped, as through the tracing decorator
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
    void atMost256AwaitTheirConfirmsAndARefusalStopsTheWritingAndIsThrownAsItselfOnceNothingIsInFlight()
            throws Exception {
        java.util.concurrent.atomic.AtomicReference<Throwable> thrown = new java.util.concurrent.atomic.AtomicReference<>();
        Thread command = new Thread(() -> {
            try {
                PublishCommand.publishAll(pipelined, "q", plan(600));
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        command.start();
        awaitWritten(PublishCommand.IN_FLIGHT);
        Thread.sleep(100); // a writer that ignored the bound would be past it by now
        assertThat(confirms).as("the bound").hasSize(PublishCommand.IN_FLIGHT);
        confirms.get(0).complete(null);
        awaitWritten(PublishCommand.IN_FLIGHT + 1); // a confirm makes room for one more
        IllegalStateException refused = new IllegalStateException("nacked by the broker");
        confirms.get(1).completeExceptionally(refused);
        int writtenWhenRefused = confirms.size();
        for (int i = 2; i < confirms.size(); i++) {
            confirms.get(i).complete(null); // room, which must not be used any more
        }
        command.join(10_000);
        assertThat(command.isAlive()).as("returned once nothing was in flight").isFalse();
        assertThat(thrown.get()).as("the refusal itself, unwrapped").isSameAs(refused);
        assertThat(confirms.size()).as("nothing more written once the refusal was known (one may be under way)")
                .isBetween(writtenWhenRefused, writtenWhenRefused + 1);
        assertThat(confirms.size()).isLessThan(600);
    }

    private void awaitWritten(int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (confirms.size() < n && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(confirms).hasSizeGreaterThanOrEqualTo(n);
    }
}
