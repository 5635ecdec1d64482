package dev.idemkit.adapters.sqs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;
import static org.quicktheories.generators.SourceDSL.maps;
import static org.quicktheories.generators.SourceDSL.strings;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

/** Laws of the SQS wire format: bodies and headers survive the trip through SQS attributes and text. */
class SqsWireProperties {

    /** Law: every body, text or binary, decodes to exactly the bytes that were encoded. */
    @Test
    void everyBodyRoundTripsByteForByte() {
        qt().withExamples(1000).forAll(anyBytes()).checkAssert(body -> {
            SqsWire.Body encoded = SqsWire.encodeBody(body);
            Map<String, software.amazon.awssdk.services.sqs.model.MessageAttributeValue> attributes =
                    SqsWire.encode("id-1", Map.of(), encoded.base64(), Map.of());
            assertThat(SqsWire.receive(encoded.text(), attributes).bytes()).isEqualTo(body);
            assertThat(SqsWire.receive(encoded.text(), attributes).problem()).isEmpty();
        });
    }

    /** Law: text that SQS accepts travels as itself, never Base64, so other consumers can read it. */
    @Test
    void acceptableTextTravelsAsText() {
        qt().withExamples(1000).forAll(strings().betweenCodePoints(0x20, 0xD7FF).ofLengthBetween(0, 60))
                .checkAssert(text -> {
                    SqsWire.Body encoded = SqsWire.encodeBody(text.getBytes(StandardCharsets.UTF_8));
                    assertThat(encoded.base64()).isFalse();
                    assertThat(encoded.text()).isEqualTo(text);
                });
    }

    /** Law: any header map comes back whole, whether its headers fit as attributes or travel packed. */
    @Test
    void everyHeaderMapRoundTrips() {
        Gen<Map<String, String>> headers = maps().of(strings().betweenCodePoints('a', 'z').ofLengthBetween(1, 8)
                .map(s -> "h-" + s), strings().basicLatinAlphabet().ofLengthBetween(0, 12)).ofSizeBetween(0, 14);
        qt().withExamples(1000).forAll(headers).checkAssert(h -> {
            var attributes = SqsWire.encode("id-1", h, false, Map.of(SqsWire.REASON, "r"));
            assertThat(attributes.size()).isLessThanOrEqualTo(SqsWire.MAX_ATTRIBUTES);
            assertThat(SqsWire.headers(attributes)).isEqualTo(h);
            assertThat(SqsWire.string(attributes, SqsWire.MESSAGE_ID)).isEqualTo("id-1");
        });
    }

    private static Gen<byte[]> anyBytes() {
        return lists().of(integers().between(-128, 127)).ofSizeBetween(0, 64).map(SqsWireProperties::toBytes);
    }

    private static byte[] toBytes(List<Integer> values) {
        byte[] out = new byte[values.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = values.get(i).byteValue();
        }
        return out;
    }
}
