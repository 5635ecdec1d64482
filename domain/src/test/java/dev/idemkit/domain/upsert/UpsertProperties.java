package dev.idemkit.domain.upsert;

import static dev.idemkit.domain.Generators.fewNaturalKeys;
import static dev.idemkit.domain.Generators.upsertSchedules;
import static dev.idemkit.domain.Generators.upsertStates;
import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

import dev.idemkit.domain.Generators.Counted;
import dev.idemkit.domain.NaturalKey;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.Transition;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class UpsertProperties {

    /** Law: apply(apply(s, k, v), k, v) == apply(s, k, v), and the second application never runs the effect. */
    @Test
    void applyingTheSameCreationTwiceEqualsApplyingItOnce() {
        qt().withExamples(1000).forAll(upsertStates(), fewNaturalKeys(), integers().between(0, 5))
                .checkAssert((s, key, value) -> {
                    Transition<UpsertState<Integer>> once = Upsert.apply(s, key, value);
                    Transition<UpsertState<Integer>> twice = Upsert.apply(once.state(), key, value);
                    assertThat(twice.state()).isEqualTo(once.state());
                    assertThat(twice.outcome().effectRan()).isFalse();
                });
    }

    /** Law: the first creation of a key wins: a present key is a Duplicate and its value is never replaced. */
    @Test
    void aPresentKeyIsNeverOverwritten() {
        qt().withExamples(1000).forAll(upsertStates(), fewNaturalKeys(), integers().between(0, 5))
                .checkAssert((s, key, value) -> {
                    Transition<UpsertState<Integer>> t = Upsert.apply(s, key, value);
                    if (s.get(key).isPresent()) {
                        assertThat(t.outcome()).isEqualTo(Outcome.DUPLICATE);
                        assertThat(t.state()).isEqualTo(s);
                    } else {
                        assertThat(t.outcome()).isEqualTo(Outcome.PROCESSED);
                        assertThat(t.state().get(key)).contains(value);
                        assertThat(t.state().entities()).hasSize(s.entities().size() + 1);
                    }
                });
    }

    /** Law: with duplicates inserted anywhere, upsert ends in the same state and counter as without them. */
    @Test
    void duplicatesInsertedAnywhereEndInTheSameStateAsTheDeduplicatedSequence() {
        qt().withExamples(1000).forAll(upsertSchedules()).checkAssert(schedule -> {
            Run withDuplicates = run(schedule.delivered());
            Run withoutDuplicates = run(schedule.deduplicated());
            Map<NaturalKey, Integer> expected = schedule.distinct().stream()
                    .collect(Collectors.toMap(Counted::delivery, Counted::amount));

            assertThat(withDuplicates.state).isEqualTo(withoutDuplicates.state);
            assertThat(withDuplicates.state.entities()).isEqualTo(expected);
            assertThat(withDuplicates.counter).isEqualTo(withoutDuplicates.counter).isEqualTo(sum(schedule.distinct()));
        });
    }

    /** Law: without the upsert, the same increments end wrong exactly when the broker delivered a duplicate. */
    @Test
    void withoutTheUpsertAnyDuplicateCorruptsTheCounter() {
        qt().withExamples(1000).forAll(upsertSchedules()).checkAssert(schedule -> {
            long naive = sum(schedule.delivered());
            long guarded = run(schedule.delivered()).counter;
            if (schedule.duplicates() > 0) {
                assertThat(naive).isNotEqualTo(guarded).isGreaterThan(guarded);
            } else {
                assertThat(naive).isEqualTo(guarded);
            }
        });
    }

    private record Run(UpsertState<Integer> state, long counter) {}

    /** The consumer under test: inserts the entity and adds its amount to a counter only when the insert happened. */
    private static Run run(List<Counted<NaturalKey>> creations) {
        UpsertState<Integer> s = UpsertState.empty();
        long counter = 0;
        for (Counted<NaturalKey> c : creations) {
            Transition<UpsertState<Integer>> t = Upsert.apply(s, c.delivery(), c.amount());
            s = t.state();
            if (t.outcome() instanceof Outcome.Processed) {
                counter += c.amount();
            }
        }
        return new Run(s, counter);
    }

    private static long sum(List<Counted<NaturalKey>> creations) {
        return creations.stream().mapToLong(Counted::amount).sum();
    }
}
