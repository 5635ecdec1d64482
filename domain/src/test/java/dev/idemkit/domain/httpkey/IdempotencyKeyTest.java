package dev.idemkit.domain.httpkey;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.InvalidKeyException;
import java.util.List;
import org.junit.jupiter.api.Test;

class IdempotencyKeyTest {

    @Test
    void quotedKeysUnescapeQuotesAndBackslashes() {
        assertThat(IdempotencyKey.parseHeader("\"8e03978e-40d5-43e8-bc93-6894a57f9324\"").value())
                .isEqualTo("8e03978e-40d5-43e8-bc93-6894a57f9324");
        assertThat(IdempotencyKey.parseHeader("\"a\\\"b\\\\c\"").value()).isEqualTo("a\"b\\c");
    }

    @Test
    void badQuotingIsRejectedNamingTheProblem() {
        assertThatThrownBy(() -> IdempotencyKey.parseHeader("\"abc")).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("without its closing quote");
        assertThatThrownBy(() -> IdempotencyKey.parseHeader("\"")).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("without its closing quote");
        assertThatThrownBy(() -> IdempotencyKey.parseHeader("\"a\\nb\"")).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("bad escape");
        assertThatThrownBy(() -> IdempotencyKey.parseHeader("\"abc\\\"")).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("without its closing quote"); // the last quote is escaped
        assertThatThrownBy(() -> IdempotencyKey.parseHeader("\"a\"b\"")).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("unescaped quote");
    }

    @Test
    void missingEmptyAndOverlongHeadersAreRejected() {
        assertThatThrownBy(() -> IdempotencyKey.parseHeader(null)).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("missing");
        assertThatThrownBy(() -> IdempotencyKey.parseHeader("")).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("empty");
        assertThatThrownBy(() -> IdempotencyKey.parseHeader("\"\"")).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("empty");
        assertThatThrownBy(() -> IdempotencyKey.parseHeader("k".repeat(256))).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("at most 255");
        assertThatThrownBy(() -> IdempotencyKey.parseHeader("two words")).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("0x20");
    }

    @Test
    void keysAreScopedByClient() {
        assertThat(ScopedKey.of("client-a", "k-1")).isNotEqualTo(ScopedKey.of("client-b", "k-1"))
                .isEqualTo(ScopedKey.of("client-a", "k-1"));
    }

    @Test
    void aListIsRefusedWithItsReason() {
        assertThatThrownBy(() -> IdempotencyKey.parseHeader("\"a\", \"b\"")).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("is a list");
        assertThatThrownBy(() -> IdempotencyKey.parseHeader("a,b")).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("is a list");
        assertThatThrownBy(() -> IdempotencyKey.parseHeader(IdempotencyKey.combineFieldLines(List.of("k-1", "k-1"))))
                .isInstanceOf(InvalidKeyException.class).hasMessageContaining("is a list");
        assertThat(IdempotencyKey.parseHeader("\"a,b\"").value()).isEqualTo("a,b"); // quoted, a comma is the key's
        assertThat(IdempotencyKey.combineFieldLines(List.of())).isNull();
        assertThat(IdempotencyKey.combineFieldLines(null)).isNull();
    }
}
