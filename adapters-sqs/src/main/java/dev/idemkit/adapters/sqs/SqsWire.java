package dev.idemkit.adapters.sqs;

import dev.idemkit.domain.deadletter.DeadLetterHeaders;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;

/**
 * The attribute layout of an idemkit message on SQS.
 *
 * <ul>
 *   <li>{@code message_id}: the idempotency key. SQS's own MessageId is assigned by the broker on
 *       every send, so it cannot be the producer's key.</li>
 *   <li>each header as one String attribute of the same name, while the message stays within SQS's
 *       10 attributes; past that, all headers travel packed as a JSON object in {@code x-idemkit-headers}.</li>
 *   <li>{@code x-idemkit-body-encoding=base64} when the body is not text SQS accepts (valid UTF-8
 *       without forbidden characters); the body is then Base64 text.</li>
 *   <li>dead letters add the domain's {@code DeadLetterHeaders}: {@code x-idemkit-origin-queue},
 *       {@code x-idemkit-dead-letter-reason}, {@code x-idemkit-attempts} ({@code AttemptHistory} encoding) and
 *       {@code x-idemkit-dead-lettered-at}; a redriven copy carries the redrive headers instead. On both copies the
 *       producer's headers are always packed ({@link #encodeCopy}, the allow-list of what crosses).</li>
 * </ul>
 */
final class SqsWire {
    static final String MESSAGE_ID = "message_id";
    static final String HEADERS = "x-idemkit-headers";
    static final String BODY_ENCODING = "x-idemkit-body-encoding";
    static final String ORIGIN_QUEUE = DeadLetterHeaders.ORIGIN_QUEUE;
    static final String REASON = DeadLetterHeaders.REASON;
    /** The reason's attribute name before the vocabulary was shared (2026-12-02); still read, never written. */
    static final String LEGACY_REASON = "x-idemkit-reason";
    static final String ATTEMPTS = DeadLetterHeaders.ATTEMPTS;
    static final String DEAD_LETTERED_AT = DeadLetterHeaders.DEAD_LETTERED_AT;
    static final int MAX_ATTRIBUTES = 10;

    /** Attributes that are idemkit's bookkeeping, never user headers. */
    static final Set<String> RESERVED = Set.of(MESSAGE_ID, HEADERS, BODY_ENCODING, ORIGIN_QUEUE, REASON, LEGACY_REASON,
            ATTEMPTS, DEAD_LETTERED_AT);

    private static final ObjectMapper JSON = new ObjectMapper();

    private SqsWire() {}

    /** A body as SQS text, with whether it had to be Base64-encoded. */
    record Body(String text, boolean base64) {}

    static Body encodeBody(byte[] body) {
        try {
            String text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(body)).toString();
            if (sqsAccepts(text)) {
                return new Body(text, false);
            }
        } catch (CharacterCodingException notUtf8) {
            // falls through to Base64
        }
        return new Body(Base64.getEncoder().encodeToString(body), true);
    }

    /**
     * A received body: the bytes the producer sent, or, when the body is not what its encoding attribute says,
     * the text as it arrived (UTF-8) with the reason. Never throws: the attributes are the producer's data.
     */
    record Received(byte[] bytes, Optional<String> problem) {}

    static Received receive(String text, Map<String, MessageAttributeValue> attributes) {
        byte[] asArrived = text.getBytes(StandardCharsets.UTF_8);
        MessageAttributeValue enc = attributes.get(BODY_ENCODING);
        if (enc == null) {
            return new Received(asArrived, Optional.empty());
        }
        if (!"base64".equals(enc.stringValue())) {
            return new Received(asArrived, Optional.of(BODY_ENCODING + "=" + printable(enc.stringValue())
                    + " is not an encoding idemkit writes (only base64)"));
        }
        try {
            return new Received(Base64.getDecoder().decode(text), Optional.empty());
        } catch (IllegalArgumentException e) {
            return new Received(asArrived, Optional.of(BODY_ENCODING + "=base64 but the body is not Base64 ("
                    + e.getMessage() + ")"));
        }
    }

    /** Attribute values from the wire may hold anything: at most 80 visible ASCII characters in a reason or log. */
    static String printable(String raw) {
        if (raw == null) {
            return "-";
        }
        String cut = raw.length() > 80 ? raw.substring(0, 80) + "..." : raw;
        return cut.replaceAll("[^\\x21-\\x7E]", "?");
    }

    /** SQS message text: #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF. */
    private static boolean sqsAccepts(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean ok = c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xFFFD && c != 0xFFFE);
            if (!ok) {
                return false;
            }
            if (Character.isSurrogate(c)) {
                if (!Character.isHighSurrogate(c) || i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) {
                    return false;
                }
                i++;
            }
        }
        return true;
    }

    /**
     * The attributes for a message: its id, its headers (one attribute each, or packed when they would
     * not fit beside {@code extras}), the body encoding flag, and {@code extras}.
     */
    static Map<String, MessageAttributeValue> encode(String rawId, Map<String, String> headers, boolean base64,
            Map<String, String> extras) {
        Map<String, MessageAttributeValue> out = new LinkedHashMap<>();
        if (rawId != null && !rawId.isEmpty()) {
            out.put(MESSAGE_ID, text(rawId));
        }
        if (base64) {
            out.put(BODY_ENCODING, text("base64"));
        }
        extras.forEach((k, v) -> out.put(k, text(v)));
        boolean fits = out.size() + headers.size() <= MAX_ATTRIBUTES
                && headers.keySet().stream().allMatch(SqsWire::isPlainAttributeName);
        if (fits) {
            headers.forEach((k, v) -> out.put(k, text(v)));
        } else if (!headers.isEmpty()) {
            out.put(HEADERS, packed(headers));
        }
        return out;
    }

    /**
     * The attributes of a copy idemkit sends (a dead letter, a redrive). The one allow-list of what crosses from the
     * received message: its id, the body encoding flag, and the producer's headers, always packed in
     * {@value #HEADERS} (never attributes of their own, so none is read as one of idemkit's); then the copy's own
     * {@code extras}. Nothing else crosses.
     */
    static Map<String, MessageAttributeValue> encodeCopy(String rawId, Map<String, String> headers, boolean base64,
            Map<String, String> extras) {
        Map<String, MessageAttributeValue> out = encode(rawId, Map.of(), base64, extras);
        if (!headers.isEmpty()) {
            out.put(HEADERS, packed(headers));
        }
        return out;
    }

    private static MessageAttributeValue packed(Map<String, String> headers) {
        try {
            return text(JSON.writeValueAsString(new TreeMap<>(headers)));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a map of strings always serialises", e);
        }
    }

    /**
     * The user headers of a received message: the packed ones, and over them every non-reserved String attribute
     * (on a copy, idemkit's redrive headers).
     */
    static Map<String, String> headers(Map<String, MessageAttributeValue> attributes) {
        Map<String, String> headers = new HashMap<>();
        MessageAttributeValue packed = attributes.get(HEADERS);
        if (packed != null && packed.stringValue() != null) {
            try {
                // the producer's data: a null value is dropped, not passed on to break the message later
                JSON.readValue(packed.stringValue(), new TypeReference<Map<String, String>>() { }).forEach((k, v) -> {
                    if (k != null && v != null) {
                        headers.put(k, v);
                    }
                });
            } catch (JsonProcessingException | RuntimeException e) {
                headers.put(HEADERS, packed.stringValue());
            }
        }
        attributes.forEach((k, v) -> {
            if (!RESERVED.contains(k) && v.stringValue() != null) {
                headers.put(k, v.stringValue());
            }
        });
        return headers;
    }

    static String string(Map<String, MessageAttributeValue> attributes, String name) {
        MessageAttributeValue v = attributes.get(name);
        return v == null ? null : v.stringValue();
    }

    static MessageAttributeValue text(String value) {
        return MessageAttributeValue.builder().dataType("String").stringValue(value).build();
    }

    /** SQS attribute names: letters, digits, '_', '-', '.', at most 256, not starting with AWS./Amazon. */
    static boolean isPlainAttributeName(String name) {
        if (name.isEmpty() || name.length() > 256 || name.startsWith(".") || name.endsWith(".") || name.contains("..")
                || name.regionMatches(true, 0, "AWS.", 0, 4) || name.regionMatches(true, 0, "Amazon.", 0, 7)
                || RESERVED.contains(name)) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!(Character.isLetterOrDigit(c) && c < 128) && c != '_' && c != '-' && c != '.') {
                return false;
            }
        }
        return true;
    }
}
