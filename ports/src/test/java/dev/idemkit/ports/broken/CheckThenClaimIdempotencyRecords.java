package dev.idemkit.ports.broken;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.ports.forwarding.ForwardingIdempotencyRecords;
import dev.idemkit.ports.memory.InMemoryIdempotencyRecords;
import java.time.Duration;
import java.util.Optional;

/**
 * BROKEN on purpose: claims with a read, a pause ({@link CheckActWindow}), then a blind write (a GET then a SET without NX): a claim
 * that another request made in between is overwritten. Sequentially right; racing requests of one key all
 * believe they hold the claim.
 */
public final class CheckThenClaimIdempotencyRecords extends ForwardingIdempotencyRecords {
    private final CheckActWindow window = new CheckActWindow();

    public CheckThenClaimIdempotencyRecords() {
        super(new InMemoryIdempotencyRecords());
    }

    @Override
    public Begin tryBegin(ScopedKey key, Fingerprint fingerprint, String fence, Duration lease) {
        Optional<KeyRecord> existing = delegate().find(key);
        if (existing.isPresent()) {
            return new Begin.Held(existing.get());
        }
        window.afterCheck(key);
        Begin begun = delegate().tryBegin(key, fingerprint, fence, lease);
        while (begun instanceof Begin.Held held && held.live() instanceof KeyRecord.InProgress other) {
            delegate().release(key, other); // the blind write: whoever claimed in between is overwritten
            begun = delegate().tryBegin(key, fingerprint, fence, lease);
        }
        return begun;
    }
}
