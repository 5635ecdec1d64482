package dev.idemkit.ports.contract;

import static dev.idemkit.ports.contract.ContractGenerators.fresh;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;

import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.Transition;
import dev.idemkit.domain.Version;
import dev.idemkit.domain.versioned.Versioned;
import dev.idemkit.domain.versioned.VersionedEvent;
import dev.idemkit.domain.versioned.VersionedState;
import dev.idemkit.domain.versioned.VersionedValue;
import dev.idemkit.ports.contract.ContractGenerators.VersionedStep;
import dev.idemkit.ports.out.UnitOfWork;
import dev.idemkit.ports.out.VersionedStore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link VersionedStore} (value type {@code Long}) passes unchanged: the seed's
 * scenario, the pure model's outcomes and state on random schedules, convergence to the highest
 * version under reordering and duplicates, {@code onApplied} in the same unit of work and only when
 * applied, and one event raced by many threads. Aggregate ids are fresh per test and per example.
 */
public abstract class VersionedStoreContract<U extends UnitOfWork> {
    /** Examples per property: {@link ContractGenerators#examples()} (1000 unless the build says otherwise). */
    protected static final int EXAMPLES = ContractGenerators.examples();
    private static final int SHRINK_CYCLES = 200;
    private static final int THREADS = 16;
    private static final int RACE_ROUNDS = 10;

    protected abstract VersionedStore<Long, U> store();

    protected abstract EffectCounter<U> counter();

    @Test
    void scenarioAppliesOnlyNewerVersions() {
        String aggregate = fresh("account");
        String counter = fresh("counter");
        List<Outcome> outcomes = new ArrayList<>();
        for (long version : new long[] {1, 2, 1, 2, 1, 3}) {
            outcomes.add(apply(aggregate, counter, new VersionedStep(1, version, 0, false)));
        }
        assertThat(outcomes).containsExactly(Outcome.PROCESSED, Outcome.PROCESSED, Outcome.STALE, Outcome.DUPLICATE,
                Outcome.STALE, Outcome.PROCESSED);
        assertThat(store().current(aggregate)).contains(new VersionedValue<>(Version.of(3), 300L));
        assertThat(counter().read(counter)).as("onApplied runs").isEqualTo(3);
    }

    /** Law: on any schedule of repeated, reordered and failing events, the store gives the outcomes and ends in the state of {@code Versioned.apply}. */
    @Test
    void randomSchedulesMatchTheModel() {
        qt().withExamples(EXAMPLES).withShrinkCycles(SHRINK_CYCLES).forAll(ContractGenerators.versionedSchedules())
                .checkAssert(this::matchesTheModel);
    }

    /** Law (convergence): per aggregate, duplicates and reordering end on the highest version's value. */
    @Test
    void reorderedAndRepeatedEventsConvergeToTheHighestVersion() {
        qt().withExamples(EXAMPLES).withShrinkCycles(SHRINK_CYCLES).forAll(ContractGenerators.versionedReorderings())
                .checkAssert(this::convergesToTheHighestVersion);
    }

    @Test
    void onAppliedRunsInTheSameUnitOfWorkOnlyWhenApplied() {
        String aggregate = fresh("account");
        String counter = fresh("counter");
        assertThat(apply(aggregate, counter, new VersionedStep(1, 5, 0, false))).isEqualTo(Outcome.PROCESSED);
        assertThat(apply(aggregate, counter, new VersionedStep(1, 5, 1, false))).isEqualTo(Outcome.DUPLICATE);
        assertThat(apply(aggregate, counter, new VersionedStep(1, 4, 0, false))).isEqualTo(Outcome.STALE);
        assertThat(counter().read(counter)).as("onApplied of one applied event").isEqualTo(1);
        assertThat(store().current(aggregate)).contains(new VersionedValue<>(Version.of(5), 500L));
    }

    @Test
    void failingOnAppliedRollsBackTheNewVersion() {
        String aggregate = fresh("account");
        String counter = fresh("counter");
        apply(aggregate, counter, new VersionedStep(1, 1, 0, false));
        assertThatThrownBy(() -> apply(aggregate, counter, new VersionedStep(1, 2, 0, true)))
                .isInstanceOf(SimulatedFailure.class);
        assertThat(store().current(aggregate)).contains(new VersionedValue<>(Version.of(1), 100L));
        assertThat(counter().read(counter)).isEqualTo(1);

        assertThat(apply(aggregate, counter, new VersionedStep(1, 2, 0, false))).isEqualTo(Outcome.PROCESSED);
        assertThat(store().current(aggregate)).contains(new VersionedValue<>(Version.of(2), 200L));
        assertThat(counter().read(counter)).isEqualTo(2);
    }

    @Test
    void unknownAggregateHasNoCurrentValue() {
        assertThat(store().current(fresh("account"))).isEmpty();
    }

    @Test
    void manyThreadsApplyingOneEventApplyItOnce() {
        for (int round = 0; round < RACE_ROUNDS; round++) {
            String aggregate = fresh("account");
            String counter = fresh("counter");
            List<Outcome> outcomes = Race.run(THREADS, i -> apply(aggregate, counter, new VersionedStep(1, 7, 0, false)));
            assertThat(outcomes).as("round %d", round).containsOnly(Outcome.PROCESSED, Outcome.DUPLICATE)
                    .containsOnlyOnce(Outcome.PROCESSED);
            assertThat(counter().read(counter)).as("round %d: onApplied ran once", round).isEqualTo(1);
        }
    }

    @Test
    void manyThreadsApplyingDifferentVersionsEndOnTheHighest() {
        for (int round = 0; round < RACE_ROUNDS; round++) {
            String aggregate = fresh("account");
            String counter = fresh("counter");
            List<Outcome> outcomes = Race.run(THREADS, i -> apply(aggregate, counter, new VersionedStep(1, i, 0, false)));
            long applied = outcomes.stream().filter(Outcome::effectRan).count();
            assertThat(outcomes).as("round %d", round).doesNotContain(Outcome.DUPLICATE);
            assertThat(store().current(aggregate)).as("round %d", round)
                    .contains(new VersionedValue<>(Version.of(THREADS - 1), (THREADS - 1) * 100L));
            assertThat(counter().read(counter)).as("round %d: one onApplied per applied event", round).isEqualTo(applied);
        }
    }

    private void matchesTheModel(List<VersionedStep> schedule) {
        Map<Integer, String> ids = freshAggregates();
        String counter = fresh("counter");
        VersionedState<Long> model = VersionedState.empty();
        long appliedCount = 0;
        List<Object> expected = new ArrayList<>();
        List<Object> actual = new ArrayList<>();
        for (VersionedStep step : schedule) {
            Transition<VersionedState<Long>> t = Versioned.apply(model, eventOf(ids.get(step.aggregate()), step));
            if (t.outcome().effectRan() && step.fails()) {
                expected.add("failed");
            } else {
                expected.add(t.outcome());
                model = t.state();
                appliedCount += t.outcome().effectRan() ? 1 : 0;
            }
            try {
                actual.add(apply(ids.get(step.aggregate()), counter, step));
            } catch (SimulatedFailure e) {
                actual.add("failed");
            }
        }
        assertThat(actual).as("outcomes of %s", schedule).isEqualTo(expected);
        assertThat(counter().read(counter)).as("onApplied runs of %s", schedule).isEqualTo(appliedCount);
        for (String id : ids.values()) {
            assertThat(store().current(id)).as("state after %s", schedule).isEqualTo(model.get(id));
        }
    }

    private void convergesToTheHighestVersion(List<VersionedStep> schedule) {
        Map<Integer, String> ids = freshAggregates();
        String counter = fresh("counter");
        Map<Integer, Long> highest = new HashMap<>();
        for (VersionedStep step : schedule) {
            apply(ids.get(step.aggregate()), counter, step);
            highest.merge(step.aggregate(), step.version(), Math::max);
        }
        for (int aggregate = 1; aggregate <= 3; aggregate++) {
            Long top = highest.get(aggregate);
            Optional<VersionedValue<Long>> expected = top == null ? Optional.empty()
                    : Optional.of(new VersionedValue<>(Version.of(top), top * 100));
            assertThat(store().current(ids.get(aggregate))).as("aggregate %d after %s", aggregate, schedule)
                    .isEqualTo(expected);
        }
    }

    private static Map<Integer, String> freshAggregates() {
        Map<Integer, String> ids = new HashMap<>();
        for (int i = 1; i <= 3; i++) {
            ids.put(i, fresh("account"));
        }
        return ids;
    }

    /** Applies the step to {@code aggregateId}; onApplied adds 1 to {@code counter}, then throws when the step fails. */
    private Outcome apply(String aggregateId, String counter, VersionedStep step) {
        return store().apply(eventOf(aggregateId, step), work -> {
            counter().add(work, counter, 1);
            if (step.fails()) {
                throw new SimulatedFailure();
            }
            return null;
        });
    }

    private static VersionedEvent<Long> eventOf(String aggregateId, VersionedStep step) {
        return new VersionedEvent<>(aggregateId, Version.of(step.version()), step.value());
    }
}
