package dev.idemkit.adapters.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;
import static org.quicktheories.generators.SourceDSL.strings;

import dev.idemkit.domain.deadletter.AttemptHistory;
import dev.idemkit.domain.deadletter.DeadLetterHeaders;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

/**
 * The allow-list of what crosses from a received record into a copy idemkit writes ({@link KafkaWire#copyHeaders}),
 * over random producer headers, idemkit's own names among them: every header of the copy is the producer's, under
 * {@link KafkaWire#APPLICATION_PREFIX} (beside the copy mark), so none is read as one of idemkit's (a forged
 * body-dropped mark, attempts, due time, reason; idemkit's reserved x-idemkit- names do not cross at all); a handler
 * sees the producer's other headers as they were sent; copying a copy changes nothing.
 */
class KafkaCopyProperties {
    private static final List<String> NAMES = List.of(KafkaWire.MESSAGE_ID, KafkaWire.BODY_DROPPED, KafkaWire.DUE_AT,
            KafkaWire.GROUP, KafkaWire.ORIGIN_PARTITION, KafkaWire.ORIGIN_OFFSET, AttemptHistory.HEADER,
            DeadLetterHeaders.REASON, DeadLetterHeaders.ORIGIN_QUEUE, DeadLetterHeaders.DEAD_LETTERED_AT,
            DeadLetterHeaders.REDRIVE_APPROVED_BY, "tenant", "traceparent", "tenant");

    @Test
    void nothingAProducerWroteIsReadAsIdemkitsOnACopyAndTheProducersHeadersSurvive() {
        qt().withExamples(1000).forAll(producerHeaders()).checkAssert(received -> {
            RecordHeaders copy = KafkaWire.copyHeaders(received);
            for (Header h : copy) {
                assertThat(h.key().startsWith(KafkaWire.APPLICATION_PREFIX) || h.key().equals(KafkaWire.COPY))
                        .as("%s, a header of the copy of %s", h.key(), names(received)).isTrue();
            }
            for (String ours : List.of(KafkaWire.MESSAGE_ID, KafkaWire.BODY_DROPPED, KafkaWire.DUE_AT,
                    AttemptHistory.HEADER, DeadLetterHeaders.REASON)) {
                assertThat(KafkaWire.last(copy, ours)).as(ours).isNull();
            }
            // idemkit's own names are reserved: a producer's x-idemkit-* header is not carried, the rest is, as sent
            Map<String, String> sent = new java.util.HashMap<>(KafkaWire.visible(received, KafkaWire.ID_ONLY));
            sent.keySet().removeIf(name -> name.startsWith("x-idemkit-"));
            assertThat(KafkaWire.visible(copy, KafkaWire.ID_ONLY)).as("what a handler sees of the copy")
                    .isEqualTo(sent);
            assertThat(pairs(KafkaWire.copyHeaders(copy))).as("a copy of the copy").isEqualTo(pairs(copy));
        });
    }

    private static Gen<Headers> producerHeaders() {
        Gen<String> name = integers().between(0, NAMES.size()).zip(strings().basicLatinAlphabet().ofLengthBetween(1, 12),
                (i, random) -> i == NAMES.size() ? random : NAMES.get(i));
        Gen<String> value = strings().basicLatinAlphabet().ofLengthBetween(0, 20);
        return lists().of(name.zip(value, Map::entry)).ofSizeBetween(0, 12).map(entries -> {
            RecordHeaders headers = new RecordHeaders();
            entries.forEach(e -> headers.add(e.getKey(), e.getValue().getBytes(StandardCharsets.UTF_8)));
            return headers;
        });
    }

    private static List<String> names(Headers headers) {
        List<String> out = new ArrayList<>();
        headers.forEach(h -> out.add(h.key()));
        return out;
    }

    private static List<String> pairs(Headers headers) {
        List<String> out = new ArrayList<>();
        headers.forEach(h -> out.add(h.key() + "=" + new String(h.value(), StandardCharsets.UTF_8)));
        return out;
    }
}
