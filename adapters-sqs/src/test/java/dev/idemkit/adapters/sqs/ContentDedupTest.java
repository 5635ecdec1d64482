package dev.idemkit.adapters.sqs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.DedupId;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ContentDedupTest {

    @Test
    void aJsonBodyIsHashedInItsCanonicalFormWithSortedKeys() {
        assertThat(ContentDedup.of(bytes("{ \"b\": [1, {\"d\":1,\"c\":2}], \"a\": \"x\" }")))
                .isEqualTo(DedupId.ofContent(bytes("{\"a\":\"x\",\"b\":[1,{\"c\":2,\"d\":1}]}")));
    }

    @Test
    void theIdIsTheHexSha256OfTheCanonicalBody() {
        // sha256("{\"a\":1}")
        assertThat(ContentDedup.of(bytes("{ \"a\" : 1 }")).value())
                .isEqualTo("015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862");
    }

    @Test
    void aBodyThatIsNotJsonIsHashedAsItsRawBytes() {
        assertThat(ContentDedup.of(bytes("plain text"))).isEqualTo(DedupId.ofContent(bytes("plain text")));
    }

    @Test
    void jsonWithTrailingGarbageIsNotCanonicalisedAway() {
        assertThat(ContentDedup.of(bytes("{\"a\":1} trailing"))).isNotEqualTo(ContentDedup.of(bytes("{\"a\":1}")));
    }

    @Test
    void jsonWithADuplicateKeyIsHashedAsItsRawBytes() {
        assertThat(ContentDedup.of(bytes("{\"a\":1,\"a\":2}"))).isEqualTo(DedupId.ofContent(bytes("{\"a\":1,\"a\":2}")));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
