package dev.idemkit.domain;

import static dev.idemkit.domain.Generators.keysWithOneForbiddenChar;
import static dev.idemkit.domain.Generators.overlongKeys;
import static dev.idemkit.domain.Generators.validKeys;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;

import dev.idemkit.domain.httpkey.ClientId;
import dev.idemkit.domain.httpkey.IdempotencyKey;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class KeyValidationProperties {

    /** Every key type, by the name its error messages use. */
    private static final Map<String, Function<String, Object>> KEY_TYPES = Map.of(
            "message id", MessageId::new,
            "idempotency key", IdempotencyKey::new,
            "consumer name", ConsumerName::new,
            "natural key", NaturalKey::new,
            "client id", ClientId::new);

    /** Law: every string of 1..255 characters from 0x21..0x7E is a valid key of every kind, kept unchanged. */
    @Test
    void everyVisibleAsciiKeyUpTo255CharactersIsAccepted() {
        qt().withExamples(1000).forAll(validKeys()).checkAssert(key -> {
            assertThat(KeyRules.isValid(key)).isTrue();
            assertThat(KeyRules.requireValid("key", key)).isSameAs(key);
            assertThat(MessageId.of(key).value()).isEqualTo(key);
            assertThat(new IdempotencyKey(key).value()).isEqualTo(key);
            KEY_TYPES.values().forEach(make -> assertThat(make.apply(key)).hasToString(key));
        });
    }

    /** Law: one control, DEL or non-ASCII character anywhere makes a key invalid, and the error names rule, key and index. */
    @Test
    void aKeyWithAForbiddenCharacterIsRejectedNamingTheRule() {
        qt().withExamples(1000).forAll(keysWithOneForbiddenChar()).checkAssert(broken -> {
            assertThat(KeyRules.isValid(broken.value())).isFalse();
            KEY_TYPES.forEach((name, make) -> assertThatThrownBy(() -> make.apply(broken.value()))
                    .isInstanceOf(InvalidKeyException.class)
                    .hasMessageStartingWith(name + " ")
                    .hasMessageContaining("0x" + Integer.toHexString(broken.forbidden()))
                    .hasMessageContaining("at index " + broken.index())
                    .hasMessageContaining("rule: visible ASCII 0x21..0x7E only"));
        });
    }

    /** Law: a key of 256 or more characters is rejected, and the error names its length and the 255 limit. */
    @Test
    void anOverlongKeyIsRejectedNamingTheRule() {
        qt().withExamples(1000).forAll(overlongKeys()).checkAssert(key -> {
            assertThat(KeyRules.isValid(key)).isFalse();
            KEY_TYPES.forEach((name, make) -> assertThatThrownBy(() -> make.apply(key))
                    .isInstanceOf(InvalidKeyException.class)
                    .hasMessage(name + " is " + key.length() + " characters long (rule: at most 255)"));
        });
    }
}
