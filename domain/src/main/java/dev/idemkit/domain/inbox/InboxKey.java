package dev.idemkit.domain.inbox;

import dev.idemkit.domain.ConsumerName;
import dev.idemkit.domain.MessageId;
import java.util.Objects;

/** The inbox key: a message id scoped by the consumer that processes it. */
public record InboxKey(ConsumerName consumer, MessageId messageId) {
    public InboxKey {
        Objects.requireNonNull(consumer, "consumer");
        Objects.requireNonNull(messageId, "messageId");
    }

    public static InboxKey of(String consumer, String messageId) {
        return new InboxKey(ConsumerName.of(consumer), MessageId.of(messageId));
    }
}
