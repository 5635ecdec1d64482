package dev.idemkit.domain.deadletter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.Message;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class FailureGroupTest {
    private static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");

    @Test
    void deadLettersAreGroupedByShapeLargestFirstWithCountsAndFirstAndLastSeen() {
        List<FailureGroup.Member> members = List.of(
                member("dl-1", "IllegalStateException: ledger locked", 0, 5),
                member("dl-2", "IllegalStateException: insufficient funds for account 42", 10, 20),
                member("dl-3", "IllegalStateException: insufficient funds for account 7", 2, 30),
                member("dl-4", "IllegalArgumentException: insufficient funds for account 7", 1, 2),
                member("dl-5", "IllegalStateException: insufficient funds for account 1093", 15, 16));

        List<FailureGroup> groups = FailureGroup.of(members);

        assertThat(groups).extracting(g -> g.shape().text()).containsExactly(
                "IllegalStateException: insufficient funds for account <n>",
                "IllegalStateException: ledger locked",
                "IllegalArgumentException: insufficient funds for account <n>");
        FailureGroup funds = groups.get(0);
        assertThat(funds.count()).isEqualTo(3);
        assertThat(funds.deadLetterIds()).containsExactly("dl-2", "dl-3", "dl-5");
        assertThat(funds.firstSeen()).as("dl-3's first attempt").isEqualTo(T0.plusSeconds(2));
        assertThat(funds.lastSeen()).as("dl-3 dead-lettered").isEqualTo(T0.plusSeconds(30));
        assertThat(funds.exampleReason()).isEqualTo("IllegalStateException: insufficient funds for account 42");
        assertThat(groups.get(1).count()).isEqualTo(1);
        assertThat(groups.get(2).deadLetterIds()).containsExactly("dl-4");
        assertThat(FailureGroup.of(List.of())).isEmpty();
    }

    @Test
    void withoutAttemptsAGroupIsSeenWhenItWasDeadLettered() {
        FailureGroup g = FailureGroup.of(List.of(new FailureGroup.Member("dl-1", new DeadLetter(message(),
                "boom", List.of(), T0)))).get(0);
        assertThat(g.firstSeen()).isEqualTo(T0).isEqualTo(g.lastSeen());
    }

    @Test
    void aGroupCountsItsIdsAndIsFirstSeenBeforeItIsLastSeen() {
        FailureShape shape = FailureShape.of("boom");
        assertThatThrownBy(() -> new FailureGroup(shape, 2, T0, T0, List.of("a"), "boom"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("count 2 for 1 ids");
        assertThatThrownBy(() -> new FailureGroup(shape, 0, T0, T0, List.of(), "boom"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new FailureGroup(shape, 1, T0.plusSeconds(1), T0, List.of("a"), "boom"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("first seen");
    }

    private static FailureGroup.Member member(String id, String reason, int firstAttempt, int deadLettered) {
        return new FailureGroup.Member(id, new DeadLetter(message(), reason, List.of(
                new AttemptRecord(1, T0.plusSeconds(firstAttempt), reason),
                new AttemptRecord(2, T0.plusSeconds(deadLettered), reason)), T0.plusSeconds(deadLettered)));
    }

    private static Message message() {
        return Message.of("m-1", "{}".getBytes(StandardCharsets.UTF_8), "orders");
    }
}
