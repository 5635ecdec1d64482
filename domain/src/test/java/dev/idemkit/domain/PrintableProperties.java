package dev.idemkit.domain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.strings;

import org.junit.jupiter.api.Test;

class PrintableProperties {

    /** Law: whatever the input, an id comes out as visible ASCII only, at most 83 characters. */
    @Test
    void anIdIsVisibleAsciiAndBounded() {
        qt().withExamples(1000).forAll(strings().allPossible().ofLengthBetween(0, 200)).checkAssert(raw -> {
            String out = Printable.id(raw);
            assertThat(out.chars()).allMatch(c -> c >= 0x21 && c <= 0x7E);
            assertThat(out.length()).isLessThanOrEqualTo(83);
        });
    }

    /** Law: free text never carries a control, format or separator character, and keeps at most max code points. */
    @Test
    void freeTextCarriesNoControlOrFormatCharacter() {
        qt().withExamples(1000).forAll(strings().allPossible().ofLengthBetween(0, 300), integers().between(1, 200))
                .checkAssert((raw, max) -> {
                    String out = Printable.text(raw, max);
                    out.codePoints().forEach(cp -> assertThat(unsafe(cp)).as("U+%04X", cp).isFalse());
                    boolean plain = raw.codePoints().noneMatch(PrintableProperties::unsafe);
                    if (plain && raw.codePointCount(0, raw.length()) <= max) {
                        assertThat(out).as("plain text within the bound is kept as it is").isEqualTo(raw);
                    }
                });
    }

    /** Law: lines keep line feeds and tabs and nothing else unsafe; without them it is text. */
    @Test
    void linesKeepLineFeedsAndTabsOnly() {
        qt().withExamples(1000).forAll(strings().allPossible().ofLengthBetween(0, 300), integers().between(1, 200))
                .checkAssert((raw, max) -> {
                    String out = Printable.lines(raw, max);
                    out.codePoints().forEach(cp -> assertThat(unsafe(cp) && cp != '\n' && cp != '\t')
                            .as("U+%04X", cp).isFalse());
                    if (raw.indexOf('\n') < 0 && raw.indexOf('\t') < 0) {
                        assertThat(out).isEqualTo(Printable.text(raw, max));
                    }
                });
        assertThat(Printable.lines("a\n\tb\r\u001b", 100)).isEqualTo("a\n\tb\\u000d\\u001b");
    }

    private static boolean unsafe(int cp) {
        int t = Character.getType(cp);
        return t == Character.CONTROL || t == Character.FORMAT || t == Character.SURROGATE || t == Character.UNASSIGNED
                || t == Character.LINE_SEPARATOR || t == Character.PARAGRAPH_SEPARATOR || t == Character.PRIVATE_USE;
    }

    @Test
    void anEscapeSequenceIsWrittenOutNotPassedOn() {
        assertThat(Printable.text("\u001b[2Jall good\r\nredrive me", 100))
                .isEqualTo("\\u001b[2Jall good\\u000d\\u000aredrive me");
        assertThat(Printable.text("ação — 決済 😀", 100)).isEqualTo("ação — 決済 😀");
        assertThat(Printable.text("abcdef", 3)).isEqualTo("abc...");
        assertThat(Printable.id("bad\u001bid")).isEqualTo("bad?id");
        assertThat(Printable.id(null)).isEqualTo("-");
    }
}
