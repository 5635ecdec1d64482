package dev.idemkit.domain.inbox;

import dev.idemkit.domain.Fingerprint;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/** The keys an inbox has recorded, each with the fingerprint of the body that was processed. Immutable. */
public record InboxState(Map<InboxKey, Fingerprint> recorded) {
    public InboxState {
        recorded = Map.copyOf(recorded);
    }

    public static InboxState empty() {
        return new InboxState(Map.of());
    }

    public Optional<Fingerprint> fingerprintOf(InboxKey key) {
        return Optional.ofNullable(recorded.get(key));
    }

    InboxState with(InboxKey key, Fingerprint fingerprint) {
        Map<InboxKey, Fingerprint> next = new HashMap<>(recorded);
        next.put(key, fingerprint);
        return new InboxState(next);
    }
}
