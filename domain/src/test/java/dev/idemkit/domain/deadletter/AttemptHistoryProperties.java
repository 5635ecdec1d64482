package dev.idemkit.domain.deadletter;

import static dev.idemkit.domain.Generators.attemptRecords;
import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.lists;

import java.util.List;
import org.junit.jupiter.api.Test;

class AttemptHistoryProperties {

    /** Law: decode(encode(h)) == h for any history whose errors fit, whatever tabs, newlines and backslashes they hold. */
    @Test
    void encodeThenDecodeGivesBackTheSameHistory() {
        qt().withExamples(1000).forAll(lists().of(attemptRecords(AttemptHistory.MAX_ERROR_LENGTH)).ofSizeBetween(0, 8))
                .checkAssert(history -> assertThat(AttemptHistory.decode(AttemptHistory.encode(history)))
                        .isEqualTo(history));
    }

    /** Law: the encoding is one header value: one line per attempt, no raw newline or CR inside an error. */
    @Test
    void encodingHasExactlyOneLinePerAttempt() {
        qt().withExamples(1000).forAll(lists().of(attemptRecords(40)).ofSizeBetween(1, 8)).checkAssert(history -> {
            String encoded = AttemptHistory.encode(history);
            assertThat(encoded.split("\n", -1)).hasSize(history.size());
            assertThat(encoded).doesNotContain("\r");
        });
    }

    /** Law: an error longer than MAX_ERROR_LENGTH comes back as its first MAX_ERROR_LENGTH characters. */
    @Test
    void overlongErrorsComeBackCutToTheLimit() {
        qt().withExamples(1000).forAll(attemptRecords(3 * AttemptHistory.MAX_ERROR_LENGTH)).checkAssert(a -> {
            AttemptRecord back = AttemptHistory.decode(AttemptHistory.encode(List.of(a))).get(0);
            String expected = a.error().length() > AttemptHistory.MAX_ERROR_LENGTH
                    ? a.error().substring(0, AttemptHistory.MAX_ERROR_LENGTH)
                    : a.error();
            assertThat(back).isEqualTo(new AttemptRecord(a.number(), a.at(), expected));
        });
    }
}
