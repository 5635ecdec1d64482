package dev.idemkit.adapters.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.inbox.InboxKey;
import org.junit.jupiter.api.Test;

class RedisUnitOfWorkTest {
    private static final KeyLayout LAYOUT = new KeyLayout("idemkit", RedisSettings.HashTagScope.CONSUMER);
    private static final String CLAIM = LAYOUT.inbox(InboxKey.of("billing", "m-1"));

    @Test
    void onAClusterAKeyOutsideTheClaimsSlotIsRefusedWhenStaged() {
        RedisUnitOfWork work = new RedisUnitOfWork(LAYOUT, CLAIM, true);
        assertThatThrownBy(() -> work.incrBy("balance:acct-1", 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(work.hashTag());
        work.incrBy(work.key("balance:acct-1"), 1).incrBy("x:" + work.hashTag() + ":y", 1);
        assertThat(work.staged()).hasSize(2);
    }

    @Test
    void onASingleServerAnyValidKeyMayBeStaged() {
        RedisUnitOfWork work = new RedisUnitOfWork(LAYOUT, CLAIM, false);
        work.incrBy("balance:acct-1", 1);
        assertThat(work.staged()).containsExactly(new RedisUnitOfWork.Staged("INCRBY", "balance:acct-1", "1", ""));
    }

    @Test
    void oneKeyCannotMixCommandFamilies() {
        RedisUnitOfWork work = new RedisUnitOfWork(LAYOUT, CLAIM, false);
        work.set("k", "text");
        assertThatThrownBy(() -> work.incrBy("k", 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> work.hset("k", "f", "v")).isInstanceOf(IllegalArgumentException.class);
        work.del("k").set("k", "again");
        assertThat(work.staged()).hasSize(3);
    }

    @Test
    void nothingCanBeStagedAfterTheUnitOfWorkClosed() {
        RedisUnitOfWork work = new RedisUnitOfWork(LAYOUT, CLAIM, false);
        work.close();
        assertThatThrownBy(() -> work.set("k", "v")).isInstanceOf(IllegalStateException.class);
    }
}
