package dev.idemkit.domain;

import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A message as the broker handed it over: the raw id (possibly absent or invalid — a message without
 * a usable id cannot be de-duplicated and is rejected, never guessed), the body untouched, the
 * headers, and the queue it came from.
 */
public record Message(String rawId, byte[] body, Map<String, String> headers, String originQueue) {
    public Message {
        body = Objects.requireNonNull(body, "body").clone();
        headers = Map.copyOf(Objects.requireNonNull(headers, "headers"));
        Objects.requireNonNull(originQueue, "originQueue");
    }

    public static Message of(String rawId, byte[] body, String originQueue) {
        return new Message(rawId, body, Map.of(), originQueue);
    }

    /** The validated id, or empty when the message has none or it breaks {@link KeyRules}. */
    public Optional<MessageId> id() {
        return KeyRules.isValid(rawId) ? Optional.of(new MessageId(rawId)) : Optional.empty();
    }

    /** The SHA-256 of the body. */
    public Fingerprint fingerprint() {
        return Fingerprint.of(body);
    }

    @Override
    public byte[] body() {
        return body.clone();
    }

    /** The body's length in bytes, without copying it as {@link #body()} does. */
    public int size() {
        return body.length;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Message m && Objects.equals(rawId, m.rawId) && Arrays.equals(body, m.body)
                && headers.equals(m.headers) && originQueue.equals(m.originQueue);
    }

    @Override
    public int hashCode() {
        return Objects.hash(rawId, Arrays.hashCode(body), headers, originQueue);
    }

    /** Never prints the body: payloads may hold personal data. */
    @Override
    public String toString() {
        return "Message[id=" + rawId + ", queue=" + originQueue + ", bytes=" + body.length + "]";
    }
}
