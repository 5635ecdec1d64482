package dev.idemkit.domain.deadletter;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class DeadLetterHeadersTest {

    @Test
    void aRedriveRecordsWhoWhyWhenAndWhatItHadDiedOf() {
        Approval approval = new Approval("ana", "bug 123 fixed", Instant.parse("2026-12-02T10:00:00Z"));

        assertThat(DeadLetterHeaders.redrive(approval, Optional.of("gave up after 3 attempts")))
                .containsExactly(
                        java.util.Map.entry("x-idemkit-redrive-approved-by", "ana"),
                        java.util.Map.entry("x-idemkit-redrive-reason", "bug 123 fixed"),
                        java.util.Map.entry("x-idemkit-redrive-approved-at", "2026-12-02T10:00:00Z"),
                        java.util.Map.entry("x-idemkit-previous-dead-letter-reason", "gave up after 3 attempts"));
        assertThat(DeadLetterHeaders.redrive(approval, Optional.empty()))
                .doesNotContainKey(DeadLetterHeaders.PREVIOUS_REASON);
    }

    @Test
    void theRedriveHeadersAreNotDeadLetterHeaders() {
        Approval approval = new Approval("ana", "why", Instant.EPOCH);
        assertThat(DeadLetterHeaders.redrive(approval, Optional.of("r")).keySet())
                .doesNotContainAnyElementsOf(DeadLetterHeaders.DEAD_LETTER);
        assertThat(DeadLetterHeaders.DEAD_LETTER).contains(AttemptHistory.HEADER, DeadLetterHeaders.REASON);
    }
}
