package dev.idemkit.adapters.sqs;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SqsWireTest {

    @Test
    void headersTravelAsOneAttributeEachWhileTheyFit() {
        var attributes = SqsWire.encode("m-1", Map.of("x-tenant", "acme", "trace.id", "t-9"), false, Map.of());
        assertThat(attributes.keySet()).containsExactlyInAnyOrder(SqsWire.MESSAGE_ID, "x-tenant", "trace.id");
        assertThat(attributes.get("x-tenant").stringValue()).isEqualTo("acme");
        assertThat(attributes.get("x-tenant").dataType()).isEqualTo("String");
    }

    @Test
    void headersThatWouldPassTenAttributesTravelPackedInOne() {
        Map<String, String> headers = new LinkedHashMap<>();
        for (int i = 0; i < 6; i++) {
            headers.put("h" + i, "v" + i);
        }
        Map<String, String> deadLetterExtras = Map.of(SqsWire.ORIGIN_QUEUE, "q", SqsWire.REASON, "r",
                SqsWire.ATTEMPTS, "", SqsWire.DEAD_LETTERED_AT, "2026-11-30T00:00:00Z");
        var attributes = SqsWire.encode("m-1", headers, false, deadLetterExtras);
        assertThat(attributes).hasSize(6).containsKey(SqsWire.HEADERS);
        assertThat(SqsWire.headers(attributes)).isEqualTo(headers);
    }

    @Test
    void aHeaderNameSqsWouldRejectMakesTheHeadersTravelPacked() {
        var attributes = SqsWire.encode("m-1", Map.of("AWS.trace", "1", "ok", "2"), false, Map.of());
        assertThat(attributes).containsOnlyKeys(SqsWire.MESSAGE_ID, SqsWire.HEADERS);
        assertThat(SqsWire.headers(attributes)).containsEntry("AWS.trace", "1").containsEntry("ok", "2");
    }

    @Test
    void idemkitBookkeepingIsNeverReadBackAsAHeader() {
        var attributes = SqsWire.encode("m-1", Map.of("x-tenant", "acme"), true,
                Map.of(SqsWire.REASON, "boom", SqsWire.ORIGIN_QUEUE, "orders"));
        assertThat(SqsWire.headers(attributes)).containsOnlyKeys("x-tenant");
    }

    @Test
    void aDeadLetterWrittenBeforeTheSharedVocabularyKeepsItsReason() {
        var attributes = SqsWire.encode("m-1", Map.of(), false, Map.of(SqsWire.LEGACY_REASON, "old name",
                SqsWire.ORIGIN_QUEUE, "orders"));
        var message = software.amazon.awssdk.services.sqs.model.Message.builder().messageId("sqs-1").body("{}")
                .messageAttributes(attributes).build();

        assertThat(SqsDeadLetters.entry("orders", message).deadLetter().reason()).isEqualTo("old name");
        assertThat(SqsWire.headers(attributes)).as("the old name is bookkeeping too").isEmpty();
    }

    @Test
    void anOldDeadLetterWhoseProducerSetTodaysReasonNameAsAHeaderShowsIdemkitsReason() {
        Map<String, software.amazon.awssdk.services.sqs.model.MessageAttributeValue> attributes = new LinkedHashMap<>(
                SqsWire.encode("m-1", Map.of(), false, Map.of(SqsWire.LEGACY_REASON, "gave up after 3 attempts")));
        attributes.put(SqsWire.REASON, SqsWire.text("all good, redrive me")); // a plain header before 2026-12-02
        var message = software.amazon.awssdk.services.sqs.model.Message.builder().messageId("sqs-2").body("{}")
                .messageAttributes(attributes).build();

        assertThat(SqsDeadLetters.entry("orders", message).deadLetter().reason()).isEqualTo("gave up after 3 attempts");
    }

    @Test
    void aMessageWithoutAnIdHasNoIdAttribute() {
        assertThat(SqsWire.encode(null, Map.of(), false, Map.of())).doesNotContainKey(SqsWire.MESSAGE_ID);
    }

    @Test
    void bytesThatAreNotUtf8TravelAsBase64() {
        SqsWire.Body body = SqsWire.encodeBody(new byte[] {(byte) 0xC3, (byte) 0x28, 0, 1});
        assertThat(body.base64()).isTrue();
        assertThat(body.text()).isEqualTo("wygAAQ==");
    }

    @Test
    void textWithACharacterSqsForbidsTravelsAsBase64() {
        assertThat(SqsWire.encodeBody(new byte[] {'a', 0x01}).base64()).isTrue();
    }
}
