package dev.idemkit.adapters.redis;

import dev.idemkit.ports.out.InboxStore;

/**
 * The inbox contract, unchanged, against the one-round-trip path ({@code runOnceStaged}, through the
 * {@code stagedOnly()} view of the same store): its effects (an INCRBY staged in the unit of work) are exactly what
 * that path is for, so every law must hold.
 */
class RedisStagedInboxContractIT extends RedisInboxStoreContractIT {
    @Override
    protected InboxStore<RedisUnitOfWork> store() {
        return ((RedisInboxStore) super.store()).stagedOnly();
    }
}
