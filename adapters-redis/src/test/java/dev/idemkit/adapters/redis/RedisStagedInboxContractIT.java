package dev.idemkit.adapters.redis;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.Guarantee;
import dev.idemkit.ports.out.Guarded;
import dev.idemkit.ports.out.InboxStore;
import java.util.Optional;

/**
 * The inbox contract, unchanged, against the one-round-trip path ({@code runOnceStaged}) of the same store: its
 * effects (an INCRBY staged in the unit of work) are exactly what that path is for, so every law must hold.
 */
class RedisStagedInboxContractIT extends RedisInboxStoreContractIT {
    @Override
    protected InboxStore<RedisUnitOfWork> store() {
        RedisInboxStore twoStep = (RedisInboxStore) super.store();
        return new InboxStore<>() {
            @Override
            public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint, Effect<? super RedisUnitOfWork, R> effect) {
                return twoStep.runOnceStaged(key, fingerprint, effect);
            }

            @Override
            public Optional<Fingerprint> recorded(InboxKey key) {
                return twoStep.recorded(key);
            }

            @Override
            public Guarantee guarantee() {
                return twoStep.guarantee();
            }
        };
    }
}
