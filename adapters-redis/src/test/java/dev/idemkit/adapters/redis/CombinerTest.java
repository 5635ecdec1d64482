package dev.idemkit.adapters.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The combiner without Redis: a "server" that answers each request with its own text, later, on another thread. */
class CombinerTest {
    private final ExecutorService server = Executors.newFixedThreadPool(4);
    private final ConcurrentLinkedQueue<List<String>> calls = new ConcurrentLinkedQueue<>();
    private final AtomicInteger out = new AtomicInteger();
    private final AtomicInteger mostOut = new AtomicInteger();

    @AfterEach
    void stop() {
        server.shutdownNow();
    }

    /** Echoes "answer to <request>" after two milliseconds, recording each call and how many were out at once. */
    private CompletableFuture<List<String>> echo(List<String> requests) {
        calls.add(requests);
        mostOut.accumulateAndGet(out.incrementAndGet(), Math::max);
        return CompletableFuture.supplyAsync(() -> {
            sleep(2);
            out.decrementAndGet();
            return requests.stream().map(r -> "answer to " + r).toList();
        }, server);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void aCallerAloneSendsItsRequestAloneAndGetsItsAnswer() throws Exception {
        Combiner<String> combiner = new Combiner<>(this::echo, 256, 2);
        for (int i = 0; i < 5; i++) {
            assertThat(combiner.submit("r" + i).get(5, TimeUnit.SECONDS)).isEqualTo("answer to r" + i);
        }
        assertThat(calls).hasSize(5).allSatisfy(call -> assertThat(call).hasSize(1));
    }

    @Test
    void concurrentCallersShareCallsAndEachGetsItsOwnAnswerExactlyOnce() throws Exception {
        Combiner<String> combiner = new Combiner<>(this::echo, 16, 2);
        ExecutorService callers = Executors.newFixedThreadPool(16);
        List<Future<List<String>>> results = new ArrayList<>();
        for (int t = 0; t < 16; t++) {
            int caller = t;
            results.add(callers.submit(() -> {
                List<String> answers = new ArrayList<>();
                for (int i = 0; i < 200; i++) {
                    answers.add(combiner.submit(caller + "-" + i).get(5, TimeUnit.SECONDS));
                }
                return answers;
            }));
        }
        for (int t = 0; t < 16; t++) {
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                expected.add("answer to " + t + "-" + i);
            }
            assertThat(results.get(t).get(60, TimeUnit.SECONDS)).isEqualTo(expected);
        }
        callers.shutdown();
        List<String> sent = calls.stream().flatMap(List::stream).toList();
        assertThat(sent).hasSize(16 * 200).doesNotHaveDuplicates();
        assertThat(mostOut).as("calls out at once").hasValueLessThanOrEqualTo(2);
        assertThat(calls).as("calls").allSatisfy(call -> assertThat(call).hasSizeBetween(1, 16));
        assertThat(calls.size()).as("16 callers waiting two milliseconds per call share calls").isLessThan(16 * 200 / 2);
    }

    @Test
    void aFailedCallFailsItsRequestsAndTheNextCallsStillGoOut() throws Exception {
        AtomicInteger n = new AtomicInteger();
        Function<List<String>, CompletableFuture<List<String>>> flaky = requests -> switch (n.getAndIncrement()) {
            case 0 -> CompletableFuture.failedFuture(new IllegalStateException("connection reset"));
            case 1 -> throw new IllegalStateException("could not even send");
            case 2 -> CompletableFuture.completedFuture(List.of());
            case 3, 4 -> throw new StackOverflowError("an Error, not an Exception");
            default -> echo(requests);
        };
        Combiner<String> combiner = new Combiner<>(flaky, 256, 1);
        assertThatThrownBy(() -> combiner.submit("a").get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasRootCauseMessage("connection reset");
        assertThatThrownBy(() -> combiner.submit("b").get(5, TimeUnit.SECONDS)).hasRootCauseMessage("could not even send");
        assertThatThrownBy(() -> combiner.submit("c").get(5, TimeUnit.SECONDS)).hasRootCauseMessage(
                "a combined call answered 0 results for 1 requests");
        // with one call allowed out, a leaked slot would leave every later request unanswered
        assertThatThrownBy(() -> combiner.submit("e1").get(5, TimeUnit.SECONDS)).hasRootCauseInstanceOf(StackOverflowError.class);
        assertThatThrownBy(() -> combiner.submit("e2").get(5, TimeUnit.SECONDS)).hasRootCauseInstanceOf(StackOverflowError.class);
        assertThat(combiner.submit("d").get(5, TimeUnit.SECONDS)).isEqualTo("answer to d");
    }

    @Test
    void limitsMustBePositive() {
        assertThatThrownBy(() -> new Combiner<String>(this::echo, 0, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Combiner<String>(this::echo, 1, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
