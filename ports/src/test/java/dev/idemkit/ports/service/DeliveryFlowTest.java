package dev.idemkit.ports.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.ConsumerName;
import dev.idemkit.domain.Message;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.Jitter;
import dev.idemkit.domain.retry.RandomSource;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.memory.InMemoryCounter;
import dev.idemkit.ports.memory.InMemoryInboxStore;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.ConsumerEvents.Decision;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.TransportException;
import dev.idemkit.ports.service.RecordingDelivery.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The one delivery flow's hooks and failure step, as every front door sees them. */
class DeliveryFlowTest {
    private final InMemoryInboxStore inbox = new InMemoryInboxStore();
    private final InMemoryCounter counter = new InMemoryCounter();
    private final List<String> hooks = new CopyOnWriteArrayList<>();

    /** Records every hook call of every delivery, in order, with the delivery's id. */
    private final ConsumerEvents recording = new ConsumerEvents() {
        @Override
        public void onDecision(ConsumerName consumer, Decision decision, Duration storeLatency) {
            throw new AssertionError("the flow reports through the observation");
        }

        @Override
        public Observation started(ConsumerName consumer, Delivery delivery) {
            String id = delivery.message().rawId();
            hooks.add("started " + id);
            return new Observation() {
                @Override
                public void decided(Decision decision, Duration storeLatency) {
                    hooks.add("decided " + id + " " + decision);
                }

                @Override
                public void failed(Throwable failure) {
                    hooks.add("failed " + id + " " + failure.getMessage());
                }

                @Override
                public void abandoned(Throwable cause) {
                    hooks.add("abandoned " + id);
                }

                @Override
                public ConsumerEvents.Scope enter() {
                    hooks.add("enter " + id);
                    return () -> hooks.add("exit " + id);
                }
            };
        }
    };

    private final DeliveryFlow flow = new DeliveryFlow(ConsumerSettings.defaults("flow").withRetryPolicy(
            RetryPolicy.defaults().withBackoff(Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(1),
                    Jitter.NONE))), RandomSource.fixed(0.5), Clock.system(), recording);

    private static RecordingDelivery delivery(String id, int attempt) {
        return new RecordingDelivery(new Message(id, "x".getBytes(StandardCharsets.UTF_8), java.util.Map.of(), "q"),
                attempt);
    }

    @Test
    void aProcessedDeliveryIsObservedStartEnterExitDecidedAndTheEffectRanInsideTheScope() {
        RecordingDelivery d = delivery("m-1", 1);
        flow.run(d, inbox, (m, work) -> {
            hooks.add("effect");
            counter.add(work, "total", 1);
        });
        assertThat(d.settlement).isEqualTo(Settlement.ACK);
        assertThat(hooks).containsExactly("started m-1", "enter m-1", "effect", "exit m-1", "decided m-1 PROCESSED");
    }

    @Test
    void aFailedAttemptIsObservedAsFailedThenRetriedAndTheLastOneAsDeadLettered() {
        RecordingDelivery first = delivery("m-2", 1);
        flow.run(first, inbox, (m, work) -> {
            throw new IllegalStateException("down");
        });
        assertThat(first.settlement).isEqualTo(Settlement.RETRY);
        assertThat(first.retryDelay).isEqualTo(Duration.ofMillis(100));
        assertThat(first.failed.number()).isEqualTo(1);
        RecordingDelivery last = delivery("m-2", 3);
        flow.run(last, inbox, (m, work) -> {
            throw new IllegalStateException("down");
        });
        assertThat(last.settlement).isEqualTo(Settlement.DEAD_LETTER);
        assertThat(last.deadLetterReason).isEqualTo("gave up after 3 attempts: IllegalStateException: down");
        assertThat(hooks).containsExactly("started m-2", "enter m-2", "exit m-2", "failed m-2 down",
                "decided m-2 RETRIED", "started m-2", "enter m-2", "exit m-2", "failed m-2 down",
                "decided m-2 DEAD_LETTERED");
    }

    @Test
    void aMessageThatFailsTheCheckIsDeadLetteredWithoutReachingTheStore() {
        RecordingDelivery d = delivery(null, 1);
        flow.run(d, inbox, (m, work) -> hooks.add("effect"));
        assertThat(d.settlement).isEqualTo(Settlement.DEAD_LETTER);
        assertThat(d.deadLetterReason).isEqualTo("non-retryable: message has no message id; it cannot be de-duplicated");
        assertThat(hooks).containsExactly("started null", "decided null DEAD_LETTERED");
    }

    @Test
    void aDeliveryTheTransportCannotSettleIsObservedAsAbandonedAndTheFailureReachesTheCaller() {
        RecordingDelivery unsettleable = new RecordingDelivery(delivery("m-3", 1).message(), 1) {
            @Override
            public void retryAfter(Duration delay, AttemptRecord failed) {
                throw new TransportException("broker gone", null);
            }
        };
        assertThatThrownBy(() -> flow.run(unsettleable, inbox, (m, work) -> {
            throw new IllegalStateException("down");
        })).isInstanceOf(TransportException.class);
        assertThat(hooks).containsExactly("started m-3", "enter m-3", "exit m-3", "failed m-3 down", "abandoned m-3");
    }

    @Test
    void theFailureStepNumbersTheAttemptAndLeavesTheDecisionToThePolicy() {
        FailureStep step = new FailureStep(RetryPolicy.defaults().withMaxAttempts(2), RandomSource.fixed(0.5),
                Clock.system());
        RecordingDelivery d = delivery("m-4", 2);
        FailureStep.Settled settled = step.fail(d, new IllegalStateException("again"));
        assertThat(settled.decision()).isEqualTo(Decision.DEAD_LETTERED);
        assertThat(settled.attempt().number()).isEqualTo(2);
        assertThat(d.deadLetterReason).isEqualTo("gave up after 2 attempts: IllegalStateException: again");
    }

    @Test
    void aHookThatThrowsNeverChangesHowADeliveryIsSettled() {
        ConsumerEvents throwing = new ConsumerEvents() {
            @Override
            public void onDecision(ConsumerName consumer, Decision decision, Duration storeLatency) {
                throw new IllegalStateException("metrics down");
            }

            @Override
            public Observation started(ConsumerName consumer, Delivery delivery) {
                return new Observation() {
                    @Override
                    public void decided(Decision decision, Duration storeLatency) {
                        throw new IllegalStateException("decided hook");
                    }

                    @Override
                    public void failed(Throwable failure) {
                        throw new IllegalStateException("failed hook");
                    }

                    @Override
                    public ConsumerEvents.Scope enter() {
                        return () -> {
                            throw new IllegalStateException("exit hook");
                        };
                    }
                };
            }
        };
        DeliveryFlow guarded = new DeliveryFlow(ConsumerSettings.defaults("flow").withRetryPolicy(RetryPolicy.defaults()
                .withMaxAttempts(1)), RandomSource.fixed(0.5), Clock.system(), throwing);
        RecordingDelivery processed = delivery("m-5", 1);
        guarded.run(processed, inbox, (m, work) -> counter.add(work, "total", 1));
        assertThat(processed.settlement).as("acked once, processed: the exit hook's failure is not the effect's")
                .isEqualTo(Settlement.ACK);
        assertThat(counter.read("total")).isEqualTo(1);
        RecordingDelivery failing = delivery("m-6", 1);
        guarded.run(failing, inbox, (m, work) -> {
            throw new IllegalStateException("down");
        });
        assertThat(failing.settlement).isEqualTo(Settlement.DEAD_LETTER);
        assertThat(failing.settlements).isEqualTo(1);
        ConsumerEvents refusing = new ConsumerEvents() {
            @Override
            public void onDecision(ConsumerName consumer, Decision decision, Duration storeLatency) {
            }

            @Override
            public Observation started(ConsumerName consumer, Delivery delivery) {
                throw new IllegalStateException("tracer down");
            }
        };
        RecordingDelivery untraced = delivery("m-7", 1);
        new DeliveryFlow(ConsumerSettings.defaults("flow"), RandomSource.fixed(0.5), Clock.system(), refusing)
                .run(untraced, inbox, (m, work) -> { });
        assertThat(untraced.settlement).isEqualTo(Settlement.ACK);
    }
}
