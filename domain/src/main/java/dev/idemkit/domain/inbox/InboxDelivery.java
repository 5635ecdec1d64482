package dev.idemkit.domain.inbox;

import dev.idemkit.domain.Fingerprint;
import java.util.Objects;

/** One delivery as the inbox sees it: its key and the fingerprint of its body. */
public record InboxDelivery(InboxKey key, Fingerprint fingerprint) {
    public InboxDelivery {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(fingerprint, "fingerprint");
    }
}
