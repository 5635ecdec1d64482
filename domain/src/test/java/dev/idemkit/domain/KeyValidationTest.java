package dev.idemkit.domain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.httpkey.IdempotencyKey;
import org.junit.jupiter.api.Test;

class KeyValidationTest {

    @Test
    void anEmptyKeyIsRejectedNamingTheRule() {
        assertThatThrownBy(() -> MessageId.of("")).isInstanceOf(InvalidKeyException.class)
                .hasMessage("message id is empty (rule: at least 1 character)");
        assertThatThrownBy(() -> new IdempotencyKey("")).isInstanceOf(InvalidKeyException.class)
                .hasMessage("idempotency key is empty (rule: at least 1 character)");
        assertThat(KeyRules.isValid("")).isFalse();
    }

    @Test
    void aMissingKeyIsRejectedNamingTheRule() {
        assertThatThrownBy(() -> MessageId.of(null)).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("message id is missing").hasMessageContaining("1..255 visible ASCII");
        assertThat(KeyRules.isValid(null)).isFalse();
    }

    @Test
    void theBoundariesOfTheRule() {
        assertThat(KeyRules.isValid("!")).isTrue();
        assertThat(KeyRules.isValid("~")).isTrue();
        assertThat(KeyRules.isValid("a".repeat(255))).isTrue();
        assertThat(KeyRules.isValid("a".repeat(256))).isFalse();
        assertThat(KeyRules.isValid("a b")).isFalse();
        assertThat(KeyRules.isValid("a\u007f")).isFalse();
        assertThat(KeyRules.isValid("caf\u00e9")).isFalse();
    }

    @Test
    void aLogForgingNewlineIsRejected() {
        assertThatThrownBy(() -> MessageId.of("m-1\nINFO processed m-2")).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("0xa at index 3");
    }
}
