package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.Inbox;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.contract.Race;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Many messages per transaction: one multi-row insert, the effect for the new ones only. */
class InboxBatchIT {
    private static TestDatabase pg;
    private static PostgresInboxStore inbox;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start(10);
        inbox = new PostgresInboxStore(pg.db());
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    @Test
    void aBatchRunsTheEffectForNewKeysOnlyAndDecidesEveryDelivery() {
        String consumer = "batch-" + UUID.randomUUID();
        inbox.runOnce(InboxKey.of(consumer, "m-2"), Fingerprint.of("b2"), w -> null);
        List<InboxDelivery> batch = List.of(delivery(consumer, "m-3", "b3"), delivery(consumer, "m-1", "b1"),
                delivery(consumer, "m-2", "b2"), delivery(consumer, "m-1", "b1"), delivery(consumer, "m-1", "other"),
                delivery(consumer, "m-2", "changed"));
        List<List<String>> seen = new ArrayList<>();

        List<Outcome> outcomes = inbox.runBatch(batch, (work, fresh) ->
                seen.add(fresh.stream().map(d -> d.key().messageId().value()).toList()));

        assertThat(outcomes).containsExactly(Outcome.PROCESSED, Outcome.PROCESSED, Outcome.DUPLICATE, Outcome.DUPLICATE,
                Outcome.rejected(Inbox.REUSED_ID), Outcome.rejected(Inbox.REUSED_ID));
        assertThat(seen).containsExactly(List.of("m-1", "m-3"));
        assertThat(inbox.recorded(InboxKey.of(consumer, "m-1"))).contains(Fingerprint.of("b1"));
    }

    @Test
    void anEffectThatThrowsRollsBackTheWholeBatch() {
        String consumer = "batch-" + UUID.randomUUID();
        List<InboxDelivery> batch = List.of(delivery(consumer, "a", "1"), delivery(consumer, "b", "2"));
        assertThatThrownBy(() -> inbox.runBatch(batch, (work, fresh) -> {
            Accounts.credit(work, consumer, fresh.size());
            throw new IllegalStateException("boom");
        })).hasMessage("boom");
        assertThat(inbox.recorded(InboxKey.of(consumer, "a"))).isEmpty();
        assertThat(new Accounts(pg).balance(consumer)).isZero();
    }

    @Test
    void eightThreadsSendingOverlappingBatchesCreditEachKeyOnce() {
        String consumer = "batch-" + UUID.randomUUID();
        String account = "acc-" + UUID.randomUUID();
        List<Integer> credited = Race.run(8, t -> {
            List<InboxDelivery> all = new ArrayList<>();
            for (int k = 0; k < 200; k++) {
                all.add(delivery(consumer, "m-" + k, "body-" + k));
            }
            Collections.shuffle(all, new Random(t));
            int mine = 0;
            for (int from = 0; from < all.size(); from += 50) {
                List<Outcome> outcomes = inbox.runBatch(all.subList(from, from + 50),
                        (work, fresh) -> Accounts.credit(work, account, fresh.size()));
                mine += (int) outcomes.stream().filter(Outcome::effectRan).count();
            }
            return mine;
        });
        assertThat(credited.stream().mapToInt(Integer::intValue).sum()).isEqualTo(200);
        assertThat(new Accounts(pg).balance(account)).isEqualTo(200);
    }

    private static InboxDelivery delivery(String consumer, String id, String body) {
        return new InboxDelivery(InboxKey.of(consumer, id), Fingerprint.of(body));
    }
}
