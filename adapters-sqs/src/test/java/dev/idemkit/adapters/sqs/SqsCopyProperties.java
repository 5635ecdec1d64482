package dev.idemkit.adapters.sqs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;
import static org.quicktheories.generators.SourceDSL.strings;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;

/**
 * The allow-list of what crosses from a received SQS message into a copy idemkit sends ({@link SqsWire#encodeCopy}),
 * over random producer attributes, idemkit's reserved names and a forged packed-headers attribute among them: the
 * copy's attributes are the id, the body flag, the packed headers and what the copy writes, nothing else; the
 * producer's headers survive as data; copying a copy changes nothing.
 */
class SqsCopyProperties {
    private static final List<String> NAMES = List.of(SqsWire.MESSAGE_ID, SqsWire.HEADERS, SqsWire.BODY_ENCODING,
            SqsWire.ORIGIN_QUEUE, SqsWire.REASON, SqsWire.LEGACY_REASON, SqsWire.ATTEMPTS, SqsWire.DEAD_LETTERED_AT,
            "x-idemkit-redrive-approved-by", "tenant", "traceparent");
    private static final Map<String, String> WRITTEN = Map.of(SqsWire.ORIGIN_QUEUE, "orders", SqsWire.REASON,
            "gave up", SqsWire.ATTEMPTS, "1", SqsWire.DEAD_LETTERED_AT, "2026-12-03T10:00:00Z");

    @Test
    void aCopyCarriesTheAllowListAndWhatItWritesAndTheProducersHeadersOnlyAsData() {
        qt().withExamples(1000).forAll(producerAttributes()).checkAssert(received -> {
            Map<String, String> headers = SqsWire.headers(received);
            Map<String, MessageAttributeValue> copy = SqsWire.encodeCopy("m-1", headers, false, WRITTEN);
            Set<String> allowed = new HashSet<>(Set.of(SqsWire.MESSAGE_ID, SqsWire.BODY_ENCODING, SqsWire.HEADERS));
            allowed.addAll(WRITTEN.keySet());
            assertThat(copy.keySet()).as("the copy of %s", received.keySet()).isSubsetOf(allowed);
            WRITTEN.forEach((name, value) -> assertThat(SqsWire.string(copy, name)).as(name).isEqualTo(value));
            assertThat(copy.size()).as("SQS's limit").isLessThanOrEqualTo(SqsWire.MAX_ATTRIBUTES);
            assertThat(SqsWire.headers(copy)).as("the producer's headers, as data").isEqualTo(headers);
            Map<String, MessageAttributeValue> again = SqsWire.encodeCopy("m-1", SqsWire.headers(copy), false, WRITTEN);
            assertThat(SqsWire.headers(again)).as("a copy of the copy").isEqualTo(headers);
        });
    }

    private static Gen<Map<String, MessageAttributeValue>> producerAttributes() {
        Gen<String> name = integers().between(0, NAMES.size()).zip(strings().basicLatinAlphabet().ofLengthBetween(1, 12),
                (i, random) -> i == NAMES.size() ? random : NAMES.get(i));
        Gen<String> value = integers().between(0, 2).zip(strings().basicLatinAlphabet().ofLengthBetween(1, 20),
                (kind, text) -> kind == 0 ? "{\"" + SqsWire.REASON + "\":\"" + text.replace("\"", "") + "\"}" : text);
        return lists().of(name.zip(value, Map::entry)).ofSizeBetween(0, 10).map(entries -> {
            Map<String, MessageAttributeValue> attributes = new LinkedHashMap<>();
            entries.forEach(e -> attributes.put(e.getKey(), SqsWire.text(e.getValue())));
            return attributes;
        });
    }
}
