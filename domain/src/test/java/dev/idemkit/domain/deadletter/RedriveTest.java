package dev.idemkit.domain.deadletter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.Message;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RedriveTest {

    private static final Instant NOW = Instant.parse("2026-11-30T12:00:00Z");

    @Test
    void anApprovalNeedsWhoAndWhy() {
        assertThatThrownBy(() -> new Approval(null, "fixed the parser", NOW))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("a redrive needs an approver (who)");
        assertThatThrownBy(() -> new Approval("  ", "fixed the parser", NOW))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("a redrive needs an approver (who)");
        assertThatThrownBy(() -> new Approval("ana", "", NOW))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("a redrive needs a reason (why)");
        assertThatThrownBy(() -> new Approval("ana", null, NOW))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("a redrive needs a reason (why)");
        assertThat(new Approval("ana", "fixed the parser", NOW).approvedBy()).isEqualTo("ana");
    }

    @Test
    void aRedriveRequestNeedsDeadLettersAndAnApproval() {
        Approval approval = new Approval("ana", "fixed the parser", NOW);
        assertThatThrownBy(() -> new RedriveRequest(List.of(), approval))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least one dead letter");
        assertThatThrownBy(() -> new RedriveRequest(List.of("dl-1"), null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("needs an approval");
    }

    @Test
    void aRedriveRequestKeepsItsOwnCopyOfTheIds() {
        List<String> ids = new ArrayList<>(List.of("dl-1"));
        RedriveRequest request = new RedriveRequest(ids, new Approval("ana", "fixed", NOW));
        ids.add("dl-2");
        assertThat(request.deadLetterIds()).containsExactly("dl-1");
    }

    @Test
    void redriveRepublishesOnlyUnprocessedMessagesWithAnId() {
        assertThat(RedriveAction.decide(true, false, true, false)).isEqualTo(RedriveAction.REPUBLISH);
        assertThat(RedriveAction.decide(true, true, true, false)).isEqualTo(RedriveAction.SKIP_ALREADY_PROCESSED);
        assertThat(RedriveAction.decide(false, false, true, false)).isEqualTo(RedriveAction.SKIP_NO_ID);
        assertThat(RedriveAction.decide(false, true, true, true)).isEqualTo(RedriveAction.SKIP_NO_ID);
    }

    @Test
    void aDeadLetterOlderThanTheDedupWindowNeedsTheSecondApproval() {
        assertThat(RedriveAction.decide(true, false, false, false)).isEqualTo(RedriveAction.SKIP_PAST_WINDOW);
        assertThat(RedriveAction.decide(true, false, false, true)).isEqualTo(RedriveAction.REPUBLISH);
        assertThat(RedriveAction.decide(true, true, false, true)).as("processed stays processed")
                .isEqualTo(RedriveAction.SKIP_ALREADY_PROCESSED);
    }

    @Test
    void aDeadLettersAgeCountsFromItsFirstAttempt() {
        Message original = Message.of("m-1", new byte[] {'x'}, "orders");
        DeadLetter dl = new DeadLetter(original, "gave up", List.of(
                new AttemptRecord(1, NOW.minus(java.time.Duration.ofDays(8)), "boom"),
                new AttemptRecord(2, NOW.minus(java.time.Duration.ofDays(2)), "boom")), NOW.minus(java.time.Duration.ofDays(1)));
        RedriveWindow week = new RedriveWindow(java.time.Duration.ofDays(7));
        assertThat(RedriveWindow.age(dl, NOW)).isEqualTo(java.time.Duration.ofDays(8));
        assertThat(week.admits(dl, NOW)).isFalse();
        assertThat(week.admits(dl, NOW.minus(java.time.Duration.ofDays(2)))).isTrue();

        DeadLetter noAttempts = new DeadLetter(original, "moved by the broker", List.of(), NOW.minus(java.time.Duration.ofDays(3)));
        assertThat(RedriveWindow.age(noAttempts, NOW)).isEqualTo(java.time.Duration.ofDays(3));
        assertThat(week.admits(noAttempts, NOW)).isTrue();
        assertThat(RedriveWindow.age(noAttempts, NOW.minus(java.time.Duration.ofDays(4)))).isZero();
    }

    @Test
    void theSecondApprovalMustComeFromAnotherPerson() {
        Approval ana = new Approval("ana", "fixed the parser", NOW);
        assertThatThrownBy(() -> new RedriveRequest(List.of("dl-1"), ana,
                java.util.Optional.of(new Approval(" ANA ", "old but safe", NOW))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("another person than ana");
        assertThat(new RedriveRequest(List.of("dl-1"), ana, java.util.Optional.of(new Approval("bo", "checked", NOW)))
                .pastWindow()).isPresent();
        assertThat(new RedriveRequest(List.of("dl-1"), ana).pastWindow()).isEmpty();
    }

    @Test
    void aDeadLetterKeepsTheOriginalAndItsOriginQueueAndNeedsAReason() {
        Message original = Message.of("m-1", "{\"a\":1}".getBytes(StandardCharsets.UTF_8), "orders");
        List<AttemptRecord> attempts = new ArrayList<>(List.of(new AttemptRecord(1, NOW, "boom")));
        DeadLetter dl = new DeadLetter(original, "gave up after 1 attempts", attempts, NOW);
        attempts.clear();

        assertThat(dl.original()).isEqualTo(original);
        assertThat(dl.originQueue()).isEqualTo("orders");
        assertThat(dl.attempts()).hasSize(1);
        assertThatThrownBy(() -> new DeadLetter(original, " ", List.of(), NOW))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("needs a reason");
    }
}
