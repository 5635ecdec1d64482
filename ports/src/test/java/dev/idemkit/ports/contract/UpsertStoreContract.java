package dev.idemkit.ports.contract;

import static dev.idemkit.ports.contract.ContractGenerators.fresh;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;

import dev.idemkit.domain.NaturalKey;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.Transition;
import dev.idemkit.domain.upsert.Upsert;
import dev.idemkit.domain.upsert.UpsertState;
import dev.idemkit.ports.contract.ContractGenerators.UpsertStep;
import dev.idemkit.ports.out.UnitOfWork;
import dev.idemkit.ports.out.UpsertStore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link UpsertStore} (value type {@code String}) passes unchanged: the seed's
 * scenario, the pure model on random schedules, first insert wins, {@code onInserted} in the same unit
 * of work and only when inserted, and one key raced by many threads. Keys are fresh per test and example.
 */
public abstract class UpsertStoreContract<U extends UnitOfWork> {
    /** Examples per property: {@link ContractGenerators#examples()} (1000 unless the build says otherwise). */
    protected static final int EXAMPLES = ContractGenerators.examples();
    private static final int SHRINK_CYCLES = 200;
    private static final int THREADS = 16;
    private static final int RACE_ROUNDS = 10;

    protected abstract UpsertStore<String, U> store();

    protected abstract EffectCounter<U> counter();

    @Test
    void scenarioInsertsEachDistinctKeyOnce() {
        Map<Integer, NaturalKey> keys = freshKeys();
        String counter = fresh("counter");
        List<Outcome> outcomes = new ArrayList<>();
        for (int key : new int[] {1, 2, 1, 2, 1, 3}) {
            outcomes.add(insert(keys.get(key), counter, new UpsertStep(key, 0, false)));
        }
        assertThat(outcomes).containsExactly(Outcome.PROCESSED, Outcome.PROCESSED, Outcome.DUPLICATE,
                Outcome.DUPLICATE, Outcome.DUPLICATE, Outcome.PROCESSED);
        assertThat(counter().read(counter)).as("onInserted runs").isEqualTo(3);
    }

    /** Law: on any schedule of repeated keys, other values and failing effects, the store gives the outcomes and ends in the state of {@code Upsert.apply}. */
    @Test
    void randomSchedulesMatchTheModel() {
        qt().withExamples(EXAMPLES).withShrinkCycles(SHRINK_CYCLES).forAll(ContractGenerators.upsertSchedules())
                .checkAssert(this::matchesTheModel);
    }

    @Test
    void firstInsertWins() {
        NaturalKey key = NaturalKey.of(fresh("order"));
        assertThat(store().insertIfAbsent(key, "first")).isEqualTo(Outcome.PROCESSED);
        assertThat(store().insertIfAbsent(key, "second")).isEqualTo(Outcome.DUPLICATE);
        assertThat(store().find(key)).contains("first");
        assertThat(store().find(NaturalKey.of(fresh("order")))).isEmpty();
    }

    @Test
    void onInsertedRunsOnlyWhenInserted() {
        NaturalKey key = NaturalKey.of(fresh("order"));
        String counter = fresh("counter");
        assertThat(insert(key, counter, new UpsertStep(1, 0, false))).isEqualTo(Outcome.PROCESSED);
        assertThat(insert(key, counter, new UpsertStep(1, 1, false))).isEqualTo(Outcome.DUPLICATE);
        assertThat(insert(key, counter, new UpsertStep(1, 0, false))).isEqualTo(Outcome.DUPLICATE);
        assertThat(counter().read(counter)).isEqualTo(1);
    }

    @Test
    void failingOnInsertedRollsBackTheInsert() {
        NaturalKey key = NaturalKey.of(fresh("order"));
        String counter = fresh("counter");
        assertThatThrownBy(() -> insert(key, counter, new UpsertStep(1, 0, true))).isInstanceOf(SimulatedFailure.class);
        assertThat(store().find(key)).isEmpty();
        assertThat(counter().read(counter)).isZero();

        assertThat(insert(key, counter, new UpsertStep(1, 1, false))).isEqualTo(Outcome.PROCESSED);
        assertThat(store().find(key)).contains(new UpsertStep(1, 1, false).value());
        assertThat(counter().read(counter)).isEqualTo(1);
    }

    @Test
    void manyThreadsInsertingOneKeyInsertItOnce() {
        for (int round = 0; round < RACE_ROUNDS; round++) {
            NaturalKey key = NaturalKey.of(fresh("order"));
            String counter = fresh("counter");
            List<Outcome> outcomes = Race.run(THREADS, i -> insert(key, counter, new UpsertStep(1, i, false)));
            assertThat(outcomes).as("round %d", round).containsOnly(Outcome.PROCESSED, Outcome.DUPLICATE)
                    .containsOnlyOnce(Outcome.PROCESSED);
            int winner = outcomes.indexOf(Outcome.PROCESSED);
            assertThat(store().find(key)).as("round %d: the winner's value", round)
                    .contains(new UpsertStep(1, winner, false).value());
            assertThat(counter().read(counter)).as("round %d: onInserted ran once", round).isEqualTo(1);
        }
    }

    private void matchesTheModel(List<UpsertStep> schedule) {
        Map<Integer, NaturalKey> keys = freshKeys();
        String counter = fresh("counter");
        UpsertState<String> model = UpsertState.empty();
        long inserted = 0;
        List<Object> expected = new ArrayList<>();
        List<Object> actual = new ArrayList<>();
        for (UpsertStep step : schedule) {
            Transition<UpsertState<String>> t = Upsert.apply(model, keys.get(step.key()), step.value());
            if (t.outcome().effectRan() && step.fails()) {
                expected.add("failed");
            } else {
                expected.add(t.outcome());
                model = t.state();
                inserted += t.outcome().effectRan() ? 1 : 0;
            }
            try {
                actual.add(insert(keys.get(step.key()), counter, step));
            } catch (SimulatedFailure e) {
                actual.add("failed");
            }
        }
        assertThat(actual).as("outcomes of %s", schedule).isEqualTo(expected);
        assertThat(counter().read(counter)).as("onInserted runs of %s", schedule).isEqualTo(inserted);
        for (NaturalKey key : keys.values()) {
            assertThat(store().find(key)).as("entity after %s", schedule).isEqualTo(model.get(key));
        }
    }

    private static Map<Integer, NaturalKey> freshKeys() {
        Map<Integer, NaturalKey> keys = new HashMap<>();
        for (int i = 1; i <= 4; i++) {
            keys.put(i, NaturalKey.of(fresh("order")));
        }
        return keys;
    }

    /** Inserts the step's value; onInserted adds 1 to {@code counter}, then throws when the step fails. */
    private Outcome insert(NaturalKey key, String counter, UpsertStep step) {
        return store().insertIfAbsent(key, step.value(), work -> {
            counter().add(work, counter, 1);
            if (step.fails()) {
                throw new SimulatedFailure();
            }
            return null;
        });
    }
}
