package dev.idemkit.ports.service;

import dev.idemkit.domain.ConsumerName;
import dev.idemkit.domain.MessageId;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.InboxStore;

/** Whether a queue's consumer already processed a message id: what makes a redrive idempotency-aware. */
@FunctionalInterface
public interface ProcessedKeys {
    boolean isProcessed(MessageId id);

    static ProcessedKeys of(InboxStore<?> inbox, ConsumerName consumer) {
        return id -> inbox.recorded(new InboxKey(consumer, id)).isPresent();
    }

    static ProcessedKeys none() {
        return id -> false;
    }
}
