package dev.idemkit.domain.httpkey;

import static dev.idemkit.domain.Generators.bareKeys;
import static dev.idemkit.domain.Generators.keysWithOneForbiddenChar;
import static dev.idemkit.domain.Generators.quoted;
import static dev.idemkit.domain.Generators.validKeys;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.booleans;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.idemkit.domain.InvalidKeyException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

class IdempotencyKeyProperties {

    /** Law: parseHeader(quote(escape(k))) == k for every valid key, quotes and backslashes included. */
    @Test
    void aQuotedStructuredFieldStringParsesBackToTheSameKey() {
        qt().withExamples(1000).forAll(validKeys()).checkAssert(key ->
                assertThat(IdempotencyKey.parseHeader(quoted(key))).isEqualTo(new IdempotencyKey(key)));
    }

    /** Law: a bare valid key (not starting with a quote) parses to itself, with surrounding whitespace ignored. */
    @Test
    void aBareKeyParsesToItself() {
        qt().withExamples(1000).forAll(bareKeys()).checkAssert(key -> {
            assertThat(IdempotencyKey.parseHeader(key).value()).isEqualTo(key);
            assertThat(IdempotencyKey.parseHeader(" \t" + key + " ").value()).isEqualTo(key);
        });
    }

    /** Law: quoting never smuggles in a forbidden character: one anywhere inside the quotes is rejected by the key rule. */
    @Test
    void aForbiddenCharacterInsideQuotesIsRejected() {
        qt().withExamples(1000).forAll(keysWithOneForbiddenChar()).checkAssert(broken -> {
            String quoted = quoted(broken.value());
            assertThatThrownBy(() -> IdempotencyKey.parseHeader(quoted)).isInstanceOf(InvalidKeyException.class)
                    .hasMessageContaining("idempotency key").hasMessageContaining("at index " + broken.index())
                    .hasMessageContaining("rule: visible ASCII 0x21..0x7E only");
        });
    }

    /**
     * Law: two or more Idempotency-Key field lines, combined as RFC 9110 does (in either order, quoted or bare, equal
     * or not), never parse to a key: the same request sent with its lines in the other order cannot claim another.
     */
    @Test
    void severalFieldLinesAreAListAndNeverAKey() {
        qt().withExamples(1000).forAll(lists().of(lineOfAKey()).ofSizeBetween(2, 4)).checkAssert(lines ->
                assertThatThrownBy(() -> IdempotencyKey.parseHeader(IdempotencyKey.combineFieldLines(lines)))
                        .isInstanceOf(InvalidKeyException.class).hasMessageContaining("is a list"));
    }

    /** Law: one field line is the field value, so combining changes nothing for a well-formed request. */
    @Test
    void oneFieldLineIsTheValueItself() {
        qt().withExamples(1000).forAll(validKeys()).checkAssert(key -> assertThat(
                IdempotencyKey.parseHeader(IdempotencyKey.combineFieldLines(List.of(quoted(key)))).value())
                .isEqualTo(key));
    }

    private static Gen<String> lineOfAKey() {
        return booleans().all().zip(validKeys(), bareKeys(), (quote, key, bare) -> quote ? quoted(key) : bare);
    }
}
