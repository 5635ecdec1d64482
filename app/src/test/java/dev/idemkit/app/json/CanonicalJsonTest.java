package dev.idemkit.app.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Canonical JSON: what a client may vary without meaning another request does not change the bytes. */
class CanonicalJsonTest {

    @Test
    void keyOrderAndSpacingDoNotChangeTheCanonicalBytes() {
        byte[] a = canonical("{\"amount\": 150.00, \"currency\": \"BRL\", \"account_id\": \"acc-123\"}");
        byte[] b = canonical("{\n  \"account_id\" : \"acc-123\",\n\t\"currency\":\"BRL\",\"amount\":150.00\n}");

        assertThat(b).isEqualTo(a);
        assertThat(text(a)).isEqualTo("{\"account_id\":\"acc-123\",\"amount\":150.00,\"currency\":\"BRL\"}");
    }

    @Test
    void numbersKeepTheirDecimalsAsWritten() {
        assertThat(text(canonical("{\"amount\": 150.00}"))).isEqualTo("{\"amount\":150.00}");
        assertThat(text(canonical("{\"amount\": 0.10}"))).isEqualTo("{\"amount\":0.10}");
        assertThat(text(canonical("{\"amount\": 150}"))).isEqualTo("{\"amount\":150}");
    }

    @Test
    void aDifferentValueGivesDifferentBytes() {
        assertThat(canonical("{\"amount\": 150.00, \"currency\": \"BRL\"}"))
                .isNotEqualTo(canonical("{\"amount\": 151.00, \"currency\": \"BRL\"}"));
        assertThat(canonical("{\"amount\": 150.00, \"currency\": \"BRL\"}"))
                .isNotEqualTo(canonical("{\"amount\": 150.00, \"currency\": \"USD\"}"));
    }

    @Test
    void nestedObjectsAreSortedButArraysKeepTheirOrder() {
        assertThat(text(canonical("{\"z\": {\"b\": 1, \"a\": [3, 1, 2]}, \"a\": true}")))
                .isEqualTo("{\"a\":true,\"z\":{\"a\":[3,1,2],\"b\":1}}");
    }

    @Test
    void theCanonicalFormIsAFixedPoint() {
        byte[] once = canonical("{ \"b\": [ {\"y\": 1, \"x\": 2.50} ], \"a\": \"\\u00e9\" }");

        assertThat(CanonicalJson.canonical(once)).isEqualTo(once);
    }

    @Test
    void somethingThatIsNotOneJsonValueIsRefused() {
        for (String bad : new String[] {"", "   ", "{\"amount\": 150.00,", "{} {}", "not json"}) {
            assertThatThrownBy(() -> CanonicalJson.parse(bad.getBytes(StandardCharsets.UTF_8)))
                    .as("'%s'", bad).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void aNumberThatWouldTakeThousandsOfDigitsToWriteOutIsRefusedNotExpanded() {
        for (String bad : new String[] {"[1e9999]", "{\"x\": 1e99999}", "[1e-9999]", "[" + "9".repeat(65) + "]",
                "[0." + "1".repeat(65) + "]"}) {
            assertThatThrownBy(() -> canonical(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("digits");
        }
        assertThat(text(canonical("[1e63, 1.5e2, " + "9".repeat(64) + "]"))).isEqualTo("[1" + "0".repeat(63) + ",150,"
                + "9".repeat(64) + "]");
    }

    @Test
    void nestingPastTheLimitIsRefused() {
        String deep = "[".repeat(CanonicalJson.MAX_DEPTH + 2) + "]".repeat(CanonicalJson.MAX_DEPTH + 2);
        assertThatThrownBy(() -> canonical(deep)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("deeper");
        String ok = "[".repeat(CanonicalJson.MAX_DEPTH) + "]".repeat(CanonicalJson.MAX_DEPTH);
        assertThat(canonical(ok)).hasSize(ok.length());
    }

    /** Law: within the limits the canonical form is never more than a few times longer than its input. */
    @Test
    void theCanonicalFormIsBoundedByItsInput() {
        org.quicktheories.QuickTheory.qt().withExamples(1000).forAll(
                org.quicktheories.generators.SourceDSL.integers().between(-64, 63),
                org.quicktheories.generators.SourceDSL.integers().between(1, 20)).checkAssert((exponent, count) -> {
                    String input = ("[" + ("1e" + exponent + ",").repeat(count) + "0]");
                    byte[] out = canonical(input);
                    assertThat(out.length).isLessThanOrEqualTo(input.length() * (CanonicalJson.MAX_NUMBER_DIGITS + 2));
                });
    }

    private static byte[] canonical(String json) {
        return CanonicalJson.canonical(json.getBytes(StandardCharsets.UTF_8));
    }

    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Test
    void aFieldNamedTwiceAtAnyDepthIsRefused() {
        for (String body : new String[] {"{\"amount\":5,\"amount\":5000}", "{\"a\":{\"x\":1,\"y\":2,\"x\":1}}",
                "[{\"k\":1},{\"k\":2,\"k\":2}]"}) {
            assertThatThrownBy(() -> CanonicalJson.parse(body.getBytes(StandardCharsets.UTF_8)))
                    .as(body).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Duplicate field");
        }
        assertThat(CanonicalJson.parse("[{\"k\":1},{\"k\":2}]".getBytes(StandardCharsets.UTF_8)).size())
                .as("one name in each of two objects").isEqualTo(2);
    }
}
