package dev.idemkit.domain.deadletter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class ApprovalTest {
    private static final Instant AT = Instant.parse("2026-12-03T10:00:00Z");

    @Test
    void whoAndWhyAreRequiredAsTextWithoutControlCharacters() {
        assertThat(new Approval("ana", "provider back, release 1.2.3", AT).reason()).isEqualTo("provider back, release 1.2.3");
        assertThatThrownBy(() -> new Approval(" ", "why", AT)).hasMessageContaining("approver");
        assertThatThrownBy(() -> new Approval("ana", null, AT)).hasMessageContaining("reason");
        assertThatThrownBy(() -> new Approval("ana", "fix\u0000ed", AT)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reason").hasMessageContaining("U+0000 at index 3");
        assertThatThrownBy(() -> new Approval("a\nna", "fixed", AT)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("approver").hasMessageContaining("U+000A at index 1");
        assertThatThrownBy(() -> new Approval("ana", "fixed\u007f", AT)).hasMessageContaining("U+007F");
    }
}
