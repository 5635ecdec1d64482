package dev.idemkit.ports.out;

import dev.idemkit.domain.KeyRules;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A message to publish. {@code id} becomes the broker's message id (the consumer's idempotency key);
 * {@code dedupId} is a broker-side deduplication id where the broker has one (SQS FIFO), derived from
 * the content when empty; {@code groupId} orders messages where the broker supports it.
 */
public record OutgoingMessage(String id, byte[] body, Map<String, String> headers, Optional<String> groupId,
        Optional<String> dedupId) {
    public OutgoingMessage {
        KeyRules.requireValid("message id", id);
        body = Objects.requireNonNull(body, "body").clone();
        headers = Map.copyOf(headers);
        Objects.requireNonNull(groupId, "groupId");
        Objects.requireNonNull(dedupId, "dedupId");
    }

    public static OutgoingMessage of(String id, byte[] body) {
        return new OutgoingMessage(id, body, Map.of(), Optional.empty(), Optional.empty());
    }

    public OutgoingMessage withHeaders(Map<String, String> h) {
        return new OutgoingMessage(id, body, h, groupId, dedupId);
    }

    public OutgoingMessage withGroup(String group) {
        return new OutgoingMessage(id, body, headers, Optional.of(group), dedupId);
    }

    @Override
    public byte[] body() {
        return body.clone();
    }
}
