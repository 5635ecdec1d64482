package dev.idemkit.app;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.app.tracing.Tracing;
import dev.idemkit.ports.memory.PendingConfirmsTransport;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutgoingMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@code idemkit publish} writes pipelined (before, one publish waited for its confirm before the next was written). */
class PublishCommandTest {
    private final PendingConfirmsTransport confirms = new PendingConfirmsTransport();
    /** As the command publishes: through the tracing decorator, so a refusal arrives wrapped in its future. */
    private final MessageTransport pipelined = Tracing.none().publishing(confirms);

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
        while (confirms.writtenSoFar().size() < 50 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(confirms.writtenSoFar()).as("all 50 written, none confirmed yet").hasSize(50);
        assertThat(done).isNotDone();
        confirms.writtenSoFar().forEach(w -> w.confirm().complete(null));
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
        assertThat(confirms.writtenSoFar()).as("the bound").hasSize(PublishCommand.IN_FLIGHT);
        confirms.writtenSoFar().get(0).confirm().complete(null);
        awaitWritten(PublishCommand.IN_FLIGHT + 1); // a confirm makes room for one more
        IllegalStateException refused = new IllegalStateException("nacked by the broker");
        confirms.writtenSoFar().get(1).confirm().completeExceptionally(refused);
        int writtenWhenRefused = confirms.writtenSoFar().size();
        for (int round = 0; round < 2; round++) { // the room this makes must not be used any more
            confirms.writtenSoFar().stream().skip(2).filter(w -> !w.confirm().isDone())
                    .forEach(w -> w.confirm().complete(null));
            Thread.sleep(50); // one write may have been under way when the refusal came: it is answered in round 2
        }
        command.join(10_000);
        assertThat(command.isAlive()).as("returned once nothing was in flight").isFalse();
        assertThat(thrown.get()).as("the refusal itself, unwrapped").isSameAs(refused);
        assertThat(confirms.writtenSoFar().size())
                .as("nothing more written once the refusal was known (one may be under way)")
                .isBetween(writtenWhenRefused, writtenWhenRefused + 1);
        assertThat(confirms.writtenSoFar().size()).isLessThan(600);
    }

    private void awaitWritten(int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (confirms.writtenSoFar().size() < n && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(confirms.writtenSoFar()).hasSizeGreaterThanOrEqualTo(n);
    }
}
