package dev.idemkit.adapters.redis;

import dev.idemkit.ports.contract.EffectCounter;
import dev.idemkit.ports.contract.InboxStoreContract;
import dev.idemkit.ports.out.InboxStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * The inbox contract, unchanged, against Redis; the counter effect is an INCRBY staged in the unit of work. The
 * server, store and counter are this class's own (one test instance per class: the staged variant below runs beside
 * it and must not share them).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisInboxStoreContractIT extends InboxStoreContract<RedisUnitOfWork> {
    private RedisTestServer redis;
    private RedisInboxStore store;
    private RedisCounter counter;

    @BeforeAll
    void connect() {
        redis = RedisTestServer.start(getClass().getSimpleName());
        store = new RedisInboxStore(redis.client, redis.settings);
        counter = new RedisCounter(redis);
    }

    @AfterAll
    void cleanUp() {
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
