package dev.idemkit.domain.versioned;

import static dev.idemkit.domain.Generators.fewVersionedEvents;
import static dev.idemkit.domain.Generators.versionedSchedules;
import static dev.idemkit.domain.Generators.versionedStates;
import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;

import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.Transition;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class VersionedProperties {

    /** Law: apply(apply(s, e), e) == apply(s, e), and the second application never runs the effect. */
    @Test
    void applyingTheSameEventTwiceEqualsApplyingItOnce() {
        qt().withExamples(1000).forAll(versionedStates(), fewVersionedEvents()).checkAssert((s, e) -> {
            Transition<VersionedState<Integer>> once = Versioned.apply(s, e);
            Transition<VersionedState<Integer>> twice = Versioned.apply(once.state(), e);
            assertThat(twice.state()).isEqualTo(once.state());
            assertThat(twice.outcome().effectRan()).isFalse();
        });
    }

    /** Law: reordered deliveries with duplicates end in the same state and counter as the same order deduplicated. */
    @Test
    void duplicatesInsertedIntoAReorderedSequenceChangeNothing() {
        qt().withExamples(1000).forAll(versionedSchedules()).checkAssert(schedule -> {
            Run withDuplicates = run(schedule.delivered());
            Run withoutDuplicates = run(schedule.deduplicated());
            assertThat(withDuplicates.state).isEqualTo(withoutDuplicates.state);
            assertThat(withDuplicates.counter).isEqualTo(withoutDuplicates.counter);
        });
    }

    /** Law: without the version check, the same increments end wrong whenever the broker delivered a duplicate. */
    @Test
    void withoutTheVersionCheckAnyDuplicateCorruptsTheCounter() {
        qt().withExamples(1000).forAll(versionedSchedules()).checkAssert(schedule -> {
            long naive = schedule.delivered().stream().mapToLong(VersionedEvent::value).sum();
            long guarded = run(schedule.delivered()).counter;
            if (schedule.duplicates() > 0) {
                assertThat(naive).isNotEqualTo(guarded).isGreaterThan(guarded);
            } else {
                assertThat(naive).isGreaterThanOrEqualTo(guarded);
            }
        });
    }

    /** Law: per aggregate, whatever the order and duplicates, the final state is the value of the highest version. */
    @Test
    void everyAggregateConvergesOnItsHighestVersion() {
        qt().withExamples(1000).forAll(versionedSchedules()).checkAssert(schedule -> {
            Map<String, VersionedEvent<Integer>> newest = schedule.distinct().stream()
                    .collect(Collectors.toMap(VersionedEvent::aggregateId, e -> e,
                            (x, y) -> x.version().compareTo(y.version()) >= 0 ? x : y));
            VersionedState<Integer> end = run(schedule.delivered()).state;

            assertThat(end.aggregates().keySet()).isEqualTo(newest.keySet());
            newest.forEach((aggregate, e) -> assertThat(end.get(aggregate))
                    .contains(new VersionedValue<>(e.version(), e.value())));
        });
    }

    /** Law: an event older than the stored version is Stale, an equal one Duplicate; neither changes state. */
    @Test
    void olderOrEqualVersionsNeverChangeState() {
        qt().withExamples(1000).forAll(versionedStates(), fewVersionedEvents()).checkAssert((s, e) -> {
            Transition<VersionedState<Integer>> t = Versioned.apply(s, e);
            s.get(e.aggregateId()).ifPresentOrElse(stored -> {
                int cmp = e.version().compareTo(stored.version());
                if (cmp <= 0) {
                    assertThat(t.state()).isEqualTo(s);
                    assertThat(t.outcome()).isEqualTo(cmp == 0 ? Outcome.DUPLICATE : Outcome.STALE);
                } else {
                    assertThat(t.outcome()).isEqualTo(Outcome.PROCESSED);
                    assertThat(t.state().get(e.aggregateId())).contains(new VersionedValue<>(e.version(), e.value()));
                }
            }, () -> assertThat(t.outcome()).isEqualTo(Outcome.PROCESSED));
        });
    }

    private record Run(VersionedState<Integer> state, long counter) {}

    /** The consumer under test: adds the event's value to a counter only when the event is applied. */
    private static Run run(List<VersionedEvent<Integer>> events) {
        VersionedState<Integer> s = VersionedState.empty();
        long counter = 0;
        for (VersionedEvent<Integer> e : events) {
            Transition<VersionedState<Integer>> t = Versioned.apply(s, e);
            s = t.state();
            if (t.outcome() instanceof Outcome.Processed) {
                counter += e.value();
            }
        }
        return new Run(s, counter);
    }
}
