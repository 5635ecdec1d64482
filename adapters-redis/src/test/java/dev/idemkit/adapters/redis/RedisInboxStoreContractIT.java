package dev.idemkit.adapters.redis;

import dev.idemkit.ports.contract.EffectCounter;
import dev.idemkit.ports.contract.InboxStoreContract;
import dev.idemkit.ports.out.InboxStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The inbox contract, unchanged, against Redis; the counter effect is an INCRBY staged in the unit of work. */
class RedisInboxStoreContractIT extends InboxStoreContract<RedisUnitOfWork> {
    private static RedisTestServer redis;
    private static RedisInboxStore store;
    private static RedisCounter counter;

    @BeforeAll
    static void connect() {
        redis = RedisTestServer.start("inbox-contract");
        store = new RedisInboxStore(redis.client, redis.settings);
        counter = new RedisCounter(redis);
    }

    @AfterAll
    static void cleanUp() {
        redis.close();
    }

    @Override
    protected InboxStore<RedisUnitOfWork> store() {
        return store;
    }

    @Override
    protected EffectCounter<RedisUnitOfWork> counter() {
        return counter;
    }
}
