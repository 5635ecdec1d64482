package dev.idemkit.domain.deadletter;

import static dev.idemkit.domain.Generators.failureReasons;
import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.strings;

import org.junit.jupiter.api.Test;

class FailureShapeProperties {

    /**
     * Law: the shape of a shape is itself, so the name the console shows is the name a client sends back, and a shape
     * is a valid FailureShape; over reasons built to hit every rule and its edges, and the cut.
     */
    @Test
    void theShapeOfAShapeIsItself() {
        qt().withExamples(3000).forAll(failureReasons()).checkAssert(reason -> {
            FailureShape shape = FailureShape.of(reason);
            assertThat(FailureShape.of(shape.text())).as("shape of %s", shape.text()).isEqualTo(shape);
            assertThat(new FailureShape(shape.text())).isEqualTo(shape);
        });
    }

    /** Law: the same over any text at all (every code point, lone surrogates included). */
    @Test
    void theShapeOfAShapeIsItselfForAnyText() {
        qt().withExamples(1000).forAll(strings().allPossible().ofLengthBetween(1, 400)).assuming(s -> !s.isBlank())
                .checkAssert(reason -> {
                    FailureShape shape = FailureShape.of(reason);
                    assertThat(FailureShape.of(shape.text())).isEqualTo(shape);
                });
    }

    /** Law: a shape is one line of printable text, no digit run left unglued, and within the bound. */
    @Test
    void aShapeIsOnePrintableBoundedLine() {
        qt().withExamples(1000).forAll(failureReasons()).checkAssert(reason -> {
            String text = FailureShape.of(reason).text();
            assertThat(text.length()).isBetween(1, FailureShape.MAX_LENGTH);
            assertThat(text).doesNotContain("\n", "\t", "\r", "  ").isEqualTo(text.strip());
            text.codePoints().forEach(cp -> assertThat(Character.isISOControl(cp)).as("U+%04X", cp).isFalse());
            assertThat(text).doesNotContainPattern("(?<![\\p{L}_\\d])\\d");
        });
    }

    /** Law: changing the numbers of a reason (not glued to a letter) never changes its shape. */
    @Test
    void theNumbersOfAReasonDoNotChangeItsShape() {
        qt().withExamples(1000).forAll(failureReasons(), strings().numeric(), strings().numeric())
                .checkAssert((reason, a, b) -> {
                    String template = reason + " for account ";
                    assertThat(FailureShape.of(template + a.replace("-", "")))
                            .isEqualTo(FailureShape.of(template + b.replace("-", "")));
                });
    }
}
