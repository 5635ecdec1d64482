package dev.idemkit.adapters.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.Inbox;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class RedisBulkInboxIT {
    private static RedisTestServer redis;
    private static RedisInboxStore store;
    private static RedisBulkInbox bulk;
    private static RedisCounter counter;

    @BeforeAll
    static void connect() {
        redis = RedisTestServer.start("bulk");
        store = new RedisInboxStore(redis.client, redis.settings);
        bulk = new RedisBulkInbox(store);
        counter = new RedisCounter(redis);
    }

    @AfterAll
    static void cleanUp() {
        redis.close();
    }

    private static InboxDelivery delivery(String consumer, String id, String body) {
        return new InboxDelivery(InboxKey.of(consumer, id), Fingerprint.of(body));
    }

    @Test
    void batchRunsNewKeysOnceAndDecidesTheRestLikeSingleDeliveries() {
        String consumer = "consumer-" + UUID.randomUUID();
        String name = "c-" + UUID.randomUUID();
        store.runOnce(InboxKey.of(consumer, "m-3"), Fingerprint.of("b3"), work -> null);
        List<InboxDelivery> batch = List.of(delivery(consumer, "m-1", "b1"), delivery(consumer, "m-2", "b2"),
                delivery(consumer, "m-1", "b1"), delivery(consumer, "m-3", "b3"), delivery(consumer, "m-3", "other"));

        List<RedisBulkInbox.BulkResult<Void>> results = bulk.runEachOnce(batch, (d, work) -> {
            counter.add(work, name, 1);
            return null;
        });

        assertThat(results.get(0).result().orElseThrow().outcome()).isEqualTo(Outcome.PROCESSED);
        assertThat(results.get(1).result().orElseThrow().outcome()).isEqualTo(Outcome.PROCESSED);
        assertThat(results.get(2).failure()).as("the same key twice in one batch: retry the second")
                .containsInstanceOf(ClaimHeldException.class);
        assertThat(results.get(3).result().orElseThrow().outcome()).isEqualTo(Outcome.DUPLICATE);
        assertThat(results.get(4).result().orElseThrow().outcome()).isEqualTo(Outcome.rejected(Inbox.REUSED_ID));
        assertThat(counter.read(name)).isEqualTo(2);
        List<RedisBulkInbox.BulkResult<Void>> again = bulk.runEachOnce(batch.subList(0, 2), (d, work) -> {
            counter.add(work, name, 1);
            return null;
        });
        assertThat(again).allSatisfy(r -> assertThat(r.result().orElseThrow().outcome()).isEqualTo(Outcome.DUPLICATE));
        assertThat(counter.read(name)).isEqualTo(2);
    }

    @Test
    void failingEffectInABatchReleasesOnlyItsOwnClaim() {
        String consumer = "consumer-" + UUID.randomUUID();
        List<InboxDelivery> batch = List.of(delivery(consumer, "m-1", "b1"), delivery(consumer, "m-2", "b2"));
        List<RedisBulkInbox.BulkResult<String>> results = bulk.runEachOnce(batch, (d, work) -> {
            if (d.key().messageId().value().equals("m-2")) {
                throw new IllegalStateException("boom");
            }
            return "ok";
        });
        assertThat(results.get(0).result().orElseThrow().value()).contains("ok");
        assertThat(results.get(1).failure()).get().extracting(Throwable::getMessage).isEqualTo("boom");
        assertThat(store.recorded(batch.get(1).key())).isEmpty();
        assertThat(redis.get(store.layout().inbox(batch.get(1).key()))).isNull();
    }
}
