package dev.idemkit.domain.deadletter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class AttemptHistoryTest {

    private static final Instant T1 = Instant.parse("2026-11-30T10:15:30Z");
    private static final Instant T2 = Instant.parse("2026-11-30T10:15:31.250Z");

    @Test
    void aHistoryRoundTripsThroughItsHeaderValue() {
        List<AttemptRecord> history = List.of(
                new AttemptRecord(1, T1, "TimeoutException: broker\tdid not answer"),
                new AttemptRecord(2, T2, "IOException: line1\nline2 \\n is not a newline\r"));
        String encoded = AttemptHistory.encode(history);

        assertThat(encoded).isEqualTo("1\t2026-11-30T10:15:30Z\tTimeoutException: broker\\tdid not answer\n"
                + "2\t2026-11-30T10:15:31.250Z\tIOException: line1\\nline2 \\\\n is not a newline\\r");
        assertThat(AttemptHistory.decode(encoded)).isEqualTo(history);
    }

    @Test
    void anEmptyHistoryIsAnEmptyString() {
        assertThat(AttemptHistory.encode(List.of())).isEmpty();
        assertThat(AttemptHistory.decode("")).isEmpty();
        assertThat(AttemptHistory.decode(null)).isEmpty();
    }

    @Test
    void aMissingErrorIsKeptAsEmpty() {
        List<AttemptRecord> history = List.of(new AttemptRecord(1, T1, null));
        assertThat(AttemptHistory.decode(AttemptHistory.encode(history)))
                .containsExactly(new AttemptRecord(1, T1, ""));
    }

    @Test
    void appendAddsAtTheEndWithoutTouchingTheOriginal() {
        List<AttemptRecord> one = List.of(new AttemptRecord(1, T1, "a"));
        List<AttemptRecord> two = AttemptHistory.append(one, new AttemptRecord(2, T2, "b"));
        assertThat(one).hasSize(1);
        assertThat(two).extracting(AttemptRecord::number).containsExactly(1, 2);
    }

    @Test
    void textThatIsNotAHistoryIsRejected() {
        assertThatThrownBy(() -> AttemptHistory.decode("hello")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("number TAB instant TAB error");
        assertThatThrownBy(() -> AttemptHistory.decode("x\t2026-11-30T10:15:30Z\terr"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not an attempt history line");
        assertThatThrownBy(() -> AttemptHistory.decode("1\tyesterday\terr"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AttemptHistory.decode("0\t2026-11-30T10:15:30Z\terr"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void attemptNumbersCountFromOne() {
        assertThatThrownBy(() -> new AttemptRecord(0, T1, "x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("count from 1");
    }
}
