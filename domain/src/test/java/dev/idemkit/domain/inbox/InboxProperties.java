package dev.idemkit.domain.inbox;

import static dev.idemkit.domain.Generators.anyBytes;
import static dev.idemkit.domain.Generators.anyMessageId;
import static dev.idemkit.domain.Generators.fewInboxDeliveries;
import static dev.idemkit.domain.Generators.inboxSchedules;
import static dev.idemkit.domain.Generators.inboxStates;
import static dev.idemkit.domain.Generators.fanOuts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;

import dev.idemkit.domain.ConsumerName;
import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Generators.Counted;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.Transition;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class InboxProperties {

    /** Law: apply(apply(s, m), m) == apply(s, m), and the second application never runs the effect. */
    @Test
    void applyingTheSameDeliveryTwiceEqualsApplyingItOnce() {
        qt().withExamples(1000).forAll(inboxStates(), fewInboxDeliveries()).checkAssert((s, m) -> {
            Transition<InboxState> once = Inbox.apply(s, m);
            Transition<InboxState> twice = Inbox.apply(once.state(), m);
            assertThat(twice.state()).isEqualTo(once.state());
            assertThat(twice.outcome().effectRan()).isFalse();
        });
    }

    /** Law: with duplicates inserted anywhere, the inbox ends in the same state and counter as without them. */
    @Test
    void duplicatesInsertedAnywhereEndInTheSameStateAsTheDeduplicatedSequence() {
        qt().withExamples(1000).forAll(inboxSchedules()).checkAssert(schedule -> {
            Run withDuplicates = run(schedule.delivered());
            Run withoutDuplicates = run(schedule.deduplicated());
            Run asSent = run(schedule.distinct());

            assertThat(withDuplicates.state).isEqualTo(withoutDuplicates.state).isEqualTo(asSent.state);
            assertThat(withDuplicates.counter).isEqualTo(withoutDuplicates.counter).isEqualTo(asSent.counter)
                    .isEqualTo(sum(schedule.distinct()));
        });
    }

    /** Law: without the inbox, the same increments end wrong exactly when the broker delivered a duplicate. */
    @Test
    void withoutTheInboxAnyDuplicateCorruptsTheCounter() {
        qt().withExamples(1000).forAll(inboxSchedules()).checkAssert(schedule -> {
            long naive = sum(schedule.delivered());
            long guarded = run(schedule.delivered()).counter;
            if (schedule.duplicates() > 0) {
                assertThat(naive).isNotEqualTo(guarded).isGreaterThan(guarded);
            } else {
                assertThat(naive).isEqualTo(guarded);
            }
        });
    }

    /** Law: a recorded key redelivered with another fingerprint is Rejected(REUSED_ID) and leaves the state alone. */
    @Test
    void reusedIdWithDifferentPayloadIsRejectedAndNeverChangesState() {
        qt().withExamples(1000).forAll(inboxStates(), fewInboxDeliveries(), anyBytes()).checkAssert((s, m, otherBody) -> {
            InboxState recorded = Inbox.apply(s, m).state();
            Fingerprint kept = recorded.fingerprintOf(m.key()).orElseThrow();
            Fingerprint other = Fingerprint.of(otherBody);
            if (other.equals(kept)) {
                return; // the same payload: a redelivery, covered by the idempotence law
            }
            InboxDelivery reuse = new InboxDelivery(m.key(), other);

            Transition<InboxState> first = Inbox.apply(recorded, reuse);
            Transition<InboxState> again = Inbox.apply(first.state(), reuse);

            assertThat(first.outcome()).isEqualTo(Outcome.rejected(Inbox.REUSED_ID));
            assertThat(again.outcome()).isEqualTo(Outcome.rejected(Inbox.REUSED_ID));
            assertThat(first.state()).isEqualTo(recorded);
            assertThat(again.state()).isEqualTo(recorded);
            assertThat(Inbox.apply(again.state(), new InboxDelivery(m.key(), kept)).outcome())
                    .isEqualTo(Outcome.DUPLICATE);
        });
    }

    /** Law: one message fanned out to two consumers, with any duplicates in any order, runs exactly once in each. */
    @Test
    void theSameMessageToTwoConsumersRunsOnceInEach() {
        ConsumerName billing = ConsumerName.of("billing");
        ConsumerName shipping = ConsumerName.of("shipping");
        qt().withExamples(1000).forAll(anyMessageId(), anyBytes(), fanOuts()).checkAssert((id, body, toBilling) -> {
            InboxState s = InboxState.empty();
            Map<ConsumerName, Integer> effects = new HashMap<>();
            for (boolean first : toBilling) {
                ConsumerName consumer = first ? billing : shipping;
                Transition<InboxState> t = Inbox.apply(s, new InboxDelivery(new InboxKey(consumer, id),
                        Fingerprint.of(body)));
                s = t.state();
                if (t.outcome().effectRan()) {
                    effects.merge(consumer, 1, Integer::sum);
                }
            }
            assertThat(effects).containsExactlyInAnyOrderEntriesOf(Map.of(billing, 1, shipping, 1));
            assertThat(s.recorded()).hasSize(2);
        });
    }

    private record Run(InboxState state, long counter) {}

    /** The consumer under test: adds the amount to a counter, only when the inbox says the effect runs. */
    private static Run run(List<Counted<InboxDelivery>> deliveries) {
        InboxState s = InboxState.empty();
        long counter = 0;
        for (Counted<InboxDelivery> c : deliveries) {
            Transition<InboxState> t = Inbox.apply(s, c.delivery());
            s = t.state();
            if (t.outcome() instanceof Outcome.Processed) {
                counter += c.amount();
            }
        }
        return new Run(s, counter);
    }

    /** The same consumer without any strategy: every delivery increments. */
    private static long sum(List<Counted<InboxDelivery>> deliveries) {
        return deliveries.stream().mapToLong(Counted::amount).sum();
    }
}
