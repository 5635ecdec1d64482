package dev.idemkit.ports.contract;

import static dev.idemkit.ports.contract.ContractGenerators.fresh;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

import dev.idemkit.domain.ConsumerName;
import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.MessageId;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.Inbox;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.domain.inbox.InboxState;
import dev.idemkit.domain.Transition;
import dev.idemkit.ports.contract.ContractGenerators.InboxStep;
import dev.idemkit.ports.contract.ContractGenerators.Schedule;
import dev.idemkit.ports.out.EffectFailedException;
import dev.idemkit.ports.out.Guarded;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.ports.out.UnitOfWork;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link InboxStore} passes unchanged: the scenario of the seed, the pure model's
 * outcomes and state on random schedules of duplicates and failures, one key raced by many threads,
 * a failing effect rolling back its key, a reused id rejected, and fan-out to two consumers.
 *
 * <p>Every test and every property example uses fresh consumer and counter names, so a subclass
 * needs no cleanup between them.
 */
public abstract class InboxStoreContract<U extends UnitOfWork> {
    /** Examples per property: {@link ContractGenerators#examples()} (1000 unless the build says otherwise). */
    protected static final int EXAMPLES = ContractGenerators.examples();
    private static final int SHRINK_CYCLES = 200;
    private static final int THREADS = 16;
    private static final int RACE_ROUNDS = 10;

    protected abstract InboxStore<U> store();

    protected abstract EffectCounter<U> counter();

    @Test
    void scenarioRunsTheEffectOncePerDistinctMessage() {
        ConsumerName consumer = ConsumerName.of(fresh("consumer"));
        String counter = fresh("counter");
        List<Outcome> outcomes = new ArrayList<>();
        for (int id : new int[] {1, 2, 1, 2, 1, 3}) {
            outcomes.add(deliver(consumer, counter, new InboxStep(id, 0, false)));
        }
        assertThat(outcomes).containsExactly(Outcome.PROCESSED, Outcome.PROCESSED, Outcome.DUPLICATE,
                Outcome.DUPLICATE, Outcome.DUPLICATE, Outcome.PROCESSED);
        assertThat(counter().read(counter)).isEqualTo(10 + 20 + 30);
    }

    /** Law: on any schedule of duplicates, reused ids and failing effects, the store gives the outcomes and ends in the state of {@code Inbox.apply}. */
    @Test
    void randomSchedulesWithDuplicatesAndFailuresMatchTheModel() {
        qt().withExamples(EXAMPLES).withShrinkCycles(SHRINK_CYCLES).forAll(ContractGenerators.inboxSchedules())
                .checkAssert(this::matchesTheModel);
    }

    /** Law (at-least-once safety): a schedule with repeats adds exactly what the same messages without repeats add. */
    @Test
    void duplicatesNeverChangeWhatTheEffectsAdd() {
        qt().withExamples(EXAMPLES).withShrinkCycles(SHRINK_CYCLES).forAll(ContractGenerators.duplicateSchedules())
                .checkAssert(this::duplicatesAreHarmless);
    }

    /**
     * Law (batches): any schedule of duplicates and reused ids, cut into batches of any size, gets from
     * {@code runBatch} the outcomes that {@code Inbox.apply} gives delivery by delivery, and the effects of exactly
     * the processed ones.
     */
    @Test
    void batchesOfRandomSchedulesDecideLikeTheModelAndRunEachNewKeyOnce() {
        qt().withExamples(EXAMPLES).withShrinkCycles(SHRINK_CYCLES)
                .forAll(ContractGenerators.inboxSchedules(), integers().between(1, 5))
                .checkAssert(this::batchesMatchTheModel);
    }

    @Test
    void aFailingBatchKeepsNothingWhereBatchesAreAtomicAndNeverRunsAnEffectTwice() {
        ConsumerName consumer = ConsumerName.of(fresh("consumer"));
        String counter = fresh("counter");
        List<InboxStep> steps = List.of(new InboxStep(1, 0, false), new InboxStep(2, 0, false),
                new InboxStep(3, 0, false));
        List<InboxDelivery> batch = steps.stream().map(st -> new InboxDelivery(keyOf(consumer, st), fingerprintOf(st)))
                .toList();

        assertThatThrownBy(() -> store().runBatch(batch, (work, fresh) -> {
            for (InboxDelivery d : fresh) {
                counter().add(work, counter, amountOf(d));
                if (d.key().messageId().value().equals("m-2")) {
                    throw new SimulatedFailure();
                }
            }
        })).isInstanceOf(SimulatedFailure.class);
        if (store().batchesAtomically()) {
            assertThat(counter().read(counter)).as("effects of a failed atomic batch").isZero();
            for (InboxDelivery d : batch) {
                assertThat(store().recorded(d.key())).as("key %s of a failed atomic batch", d.key()).isEmpty();
            }
        }

        List<Outcome> again = store().runBatch(batch, (work, fresh) -> {
            for (InboxDelivery d : fresh) {
                counter().add(work, counter, amountOf(d));
            }
        });
        assertThat(again).doesNotContain(Outcome.rejected(Inbox.REUSED_ID));
        assertThat(counter().read(counter)).as("each effect once, whatever the failed batch kept")
                .isEqualTo(steps.stream().mapToLong(InboxStep::amount).sum());
        assertThat(store().runBatch(batch, (work, fresh) -> {
            throw new AssertionError("a batch of known keys ran effects for " + fresh);
        })).containsOnly(Outcome.DUPLICATE);
    }

    @Test
    void manyThreadsDeliveringOneKeyRunTheEffectOnce() {
        for (int round = 0; round < RACE_ROUNDS; round++) {
            ConsumerName consumer = ConsumerName.of(fresh("consumer"));
            String counter = fresh("counter");
            InboxStep step = new InboxStep(1, 0, false);
            List<Outcome> outcomes = Race.run(THREADS, i -> deliver(consumer, counter, step));
            assertThat(outcomes).as("round %d: outcomes of %d racing deliveries of one key", round, THREADS)
                    .containsOnly(Outcome.PROCESSED, Outcome.DUPLICATE).containsOnlyOnce(Outcome.PROCESSED);
            assertThat(counter().read(counter)).as("round %d: the effect ran once", round).isEqualTo(step.amount());
        }
    }

    @Test
    void failingEffectRollsBackItsKeySoThatARetryRunsIt() {
        ConsumerName consumer = ConsumerName.of(fresh("consumer"));
        String counter = fresh("counter");
        InboxStep step = new InboxStep(1, 0, true);
        InboxKey key = keyOf(consumer, step);

        assertThatThrownBy(() -> deliver(consumer, counter, step)).isInstanceOf(SimulatedFailure.class);
        assertThat(counter().read(counter)).as("the failed effect's write").isZero();
        assertThat(store().recorded(key)).as("the key of a failed effect").isEmpty();

        InboxStep retry = new InboxStep(1, 0, false);
        assertThat(deliver(consumer, counter, retry)).isEqualTo(Outcome.PROCESSED);
        assertThat(deliver(consumer, counter, retry)).isEqualTo(Outcome.DUPLICATE);
        assertThat(counter().read(counter)).isEqualTo(retry.amount());
        assertThat(store().recorded(key)).contains(fingerprintOf(retry));
    }

    @Test
    void effectExceptionsReachTheCallerUnchangedOrWrappedWhenChecked() {
        InboxKey key = InboxKey.of(fresh("consumer"), "m-1");
        Fingerprint fp = Fingerprint.of("body");
        IllegalStateException unchecked = new IllegalStateException("unchecked failure");
        assertThatThrownBy(() -> store().runOnce(key, fp, work -> {
            throw unchecked;
        })).isSameAs(unchecked);
        Exception checked = new Exception("checked failure");
        assertThatThrownBy(() -> store().runOnce(key, fp, work -> {
            throw checked;
        })).isInstanceOf(EffectFailedException.class).hasCause(checked);
        assertThat(store().recorded(key)).isEmpty();
    }

    @Test
    void processedOutcomeCarriesTheEffectsValue() {
        InboxKey key = InboxKey.of(fresh("consumer"), "m-1");
        Fingerprint fp = Fingerprint.of("body");
        Guarded<String> first = store().runOnce(key, fp, work -> "result");
        Guarded<String> second = store().runOnce(key, fp, work -> "never");
        assertThat(first).isEqualTo(new Guarded<>(Outcome.PROCESSED, Optional.of("result")));
        assertThat(second).isEqualTo(new Guarded<>(Outcome.DUPLICATE, Optional.empty()));
    }

    @Test
    void reusedIdWithADifferentBodyIsRejectedAndKeepsTheFirstFingerprint() {
        ConsumerName consumer = ConsumerName.of(fresh("consumer"));
        String counter = fresh("counter");
        InboxStep original = new InboxStep(1, 0, false);
        InboxStep reused = new InboxStep(1, 1, false);

        assertThat(deliver(consumer, counter, original)).isEqualTo(Outcome.PROCESSED);
        assertThat(deliver(consumer, counter, reused)).isEqualTo(Outcome.rejected(Inbox.REUSED_ID));
        assertThat(counter().read(counter)).isEqualTo(original.amount());
        assertThat(store().recorded(keyOf(consumer, original))).contains(fingerprintOf(original));
    }

    @Test
    void sameMessageRunsOnceForEachOfTwoConsumers() {
        ConsumerName billing = ConsumerName.of(fresh("billing"));
        ConsumerName shipping = ConsumerName.of(fresh("shipping"));
        String counter = fresh("counter");
        InboxStep step = new InboxStep(1, 0, false);

        assertThat(deliver(billing, counter, step)).isEqualTo(Outcome.PROCESSED);
        assertThat(deliver(shipping, counter, step)).isEqualTo(Outcome.PROCESSED);
        assertThat(deliver(billing, counter, step)).isEqualTo(Outcome.DUPLICATE);
        assertThat(deliver(shipping, counter, step)).isEqualTo(Outcome.DUPLICATE);
        assertThat(counter().read(counter)).isEqualTo(2 * step.amount());
    }

    private void matchesTheModel(List<InboxStep> schedule) {
        ConsumerName consumer = ConsumerName.of(fresh("consumer"));
        String counter = fresh("counter");
        InboxState model = InboxState.empty();
        long expectedTotal = 0;
        List<Object> expected = new ArrayList<>();
        List<Object> actual = new ArrayList<>();
        for (InboxStep step : schedule) {
            Transition<InboxState> t = Inbox.apply(model, new InboxDelivery(keyOf(consumer, step), fingerprintOf(step)));
            if (t.outcome().effectRan() && step.fails()) {
                expected.add("failed");
            } else {
                expected.add(t.outcome());
                model = t.state();
                expectedTotal += t.outcome().effectRan() ? step.amount() : 0;
            }
            actual.add(deliverCatchingFailure(consumer, counter, step));
        }
        assertThat(actual).as("outcomes of %s", schedule).isEqualTo(expected);
        assertThat(counter().read(counter)).as("committed effects of %s", schedule).isEqualTo(expectedTotal);
        for (int id = 1; id <= 4; id++) {
            InboxKey key = InboxKey.of(consumer.value(), "m-" + id);
            assertThat(store().recorded(key)).as("recorded fingerprint of m-%d after %s", id, schedule)
                    .isEqualTo(model.fingerprintOf(key));
        }
    }

    private void batchesMatchTheModel(List<InboxStep> schedule, int batchSize) {
        ConsumerName consumer = ConsumerName.of(fresh("consumer"));
        String counter = fresh("counter");
        InboxState model = InboxState.empty();
        long expectedTotal = 0;
        List<Outcome> expected = new ArrayList<>();
        List<InboxDelivery> deliveries = new ArrayList<>();
        java.util.Map<InboxDelivery, Long> amounts = new java.util.HashMap<>();
        for (InboxStep step : schedule) {
            InboxDelivery d = new InboxDelivery(keyOf(consumer, step), fingerprintOf(step));
            amounts.put(d, step.amount());
            Transition<InboxState> t = Inbox.apply(model, d);
            expected.add(t.outcome());
            model = t.state();
            expectedTotal += t.outcome().effectRan() ? step.amount() : 0;
            deliveries.add(d);
        }
        List<Outcome> actual = new ArrayList<>();
        for (int from = 0; from < deliveries.size(); from += batchSize) {
            List<InboxDelivery> batch = deliveries.subList(from, Math.min(deliveries.size(), from + batchSize));
            List<Outcome> outcomes = store().runBatch(batch, (work, fresh) -> {
                assertThat(fresh.stream().map(InboxDelivery::key).distinct().count()).as("fresh keys are distinct")
                        .isEqualTo(fresh.size());
                for (InboxDelivery d : fresh) {
                    counter().add(work, counter, amounts.get(d));
                }
            });
            assertThat(outcomes).as("one outcome per delivery of %s", batch).hasSize(batch.size());
            actual.addAll(outcomes);
        }
        assertThat(actual).as("outcomes of %s in batches of %d", schedule, batchSize).isEqualTo(expected);
        assertThat(counter().read(counter)).as("committed effects of %s in batches of %d", schedule, batchSize)
                .isEqualTo(expectedTotal);
    }

    /** The amount a step of variant 0 adds ({@link InboxStep#amount()}), recovered from the delivery's message id. */
    private static long amountOf(InboxDelivery d) {
        return new InboxStep(Integer.parseInt(d.key().messageId().value().substring(2)), 0, false).amount();
    }

    private void duplicatesAreHarmless(Schedule schedule) {
        ConsumerName withRepeats = ConsumerName.of(fresh("consumer"));
        ConsumerName without = ConsumerName.of(fresh("consumer"));
        String repeatedCounter = fresh("counter");
        String distinctCounter = fresh("counter");
        for (int id : schedule.withDuplicates()) {
            deliver(withRepeats, repeatedCounter, new InboxStep(id, 0, false));
        }
        long sum = 0;
        for (int id : schedule.distinct()) {
            deliver(without, distinctCounter, new InboxStep(id, 0, false));
            sum += new InboxStep(id, 0, false).amount();
        }
        assertThat(counter().read(repeatedCounter)).as("effects of %s", schedule.withDuplicates())
                .isEqualTo(counter().read(distinctCounter)).isEqualTo(sum);
    }

    private Object deliverCatchingFailure(ConsumerName consumer, String counter, InboxStep step) {
        try {
            return deliver(consumer, counter, step);
        } catch (SimulatedFailure expected) {
            return "failed";
        }
    }

    /** Runs one delivery whose effect adds the step's amount to {@code counter} (then throws when the step fails). */
    private Outcome deliver(ConsumerName consumer, String counter, InboxStep step) {
        return store().runOnce(keyOf(consumer, step), fingerprintOf(step), work -> {
            counter().add(work, counter, step.amount());
            if (step.fails()) {
                throw new SimulatedFailure();
            }
            return null;
        }).outcome();
    }

    private static InboxKey keyOf(ConsumerName consumer, InboxStep step) {
        return new InboxKey(consumer, MessageId.of(step.messageId()));
    }

    private static Fingerprint fingerprintOf(InboxStep step) {
        return Fingerprint.of(step.body());
    }
}
