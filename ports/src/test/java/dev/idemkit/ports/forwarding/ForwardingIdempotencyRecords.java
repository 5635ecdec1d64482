package dev.idemkit.ports.forwarding;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.out.IdempotencyRecords;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/** Forwards every call to another store; tests override what they break or observe. */
public class ForwardingIdempotencyRecords implements IdempotencyRecords {
    private final IdempotencyRecords delegate;

    public ForwardingIdempotencyRecords(IdempotencyRecords delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    protected final IdempotencyRecords delegate() {
        return delegate;
    }

    @Override
    public Begin tryBegin(ScopedKey key, Fingerprint fingerprint, String fence, Duration lease) {
        return delegate.tryBegin(key, fingerprint, fence, lease);
    }

    @Override
    public boolean renew(ScopedKey key, KeyRecord.InProgress claim, Duration lease) {
        return delegate.renew(key, claim, lease);
    }

    @Override
    public boolean complete(ScopedKey key, KeyRecord.InProgress claim, StoredResponse response, Duration ttl) {
        return delegate.complete(key, claim, response, ttl);
    }

    @Override
    public void release(ScopedKey key, KeyRecord.InProgress claim) {
        delegate.release(key, claim);
    }

    @Override
    public Optional<KeyRecord> find(ScopedKey key) {
        return delegate.find(key);
    }

    @Override
    public int purgeExpired(int batchSize) {
        return delegate.purgeExpired(batchSize);
    }
}
