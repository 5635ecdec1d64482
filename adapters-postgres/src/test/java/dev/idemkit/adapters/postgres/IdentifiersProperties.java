package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.strings;

import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Laws of identifier validation: only plain names pass, and a quoted valid name holds no SQL of its own. */
class IdentifiersProperties {
    private static final Pattern PLAIN = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

    /** Law: an identifier is accepted exactly when it is a plain lowercase name of at most 63 characters. */
    @Test
    void anIdentifierIsAcceptedExactlyWhenItIsAPlainName() {
        qt().withExamples(1000).forAll(strings().allPossible().ofLengthBetween(0, 70)).check(s -> {
            boolean accepted;
            try {
                Identifiers.requireValid("column", s);
                accepted = true;
            } catch (IllegalArgumentException e) {
                accepted = false;
            }
            return accepted == PLAIN.matcher(s).matches();
        });
    }

    /** Law: every accepted name, quoted, is exactly the name between two double quotes. */
    @Test
    void aQuotedValidNameIsTheNameBetweenTwoQuotes() {
        qt().withExamples(1000).forAll(strings().betweenCodePoints('a', 'z').ofLengthBetween(1, 63)
                        .map(s -> s.replace('q', '_').replace('x', '7').replaceFirst("^7", "x")))
                .check(s -> Identifiers.quote(Identifiers.requireValid("column", s)).equals("\"" + s + "\""));
        assertThat(Identifiers.quote("public.accounts")).isEqualTo("\"public\".\"accounts\"");
    }
}
