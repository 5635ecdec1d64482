package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.Inbox;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.LogPosition;
import java.util.List;
import java.util.OptionalLong;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Offsets in the database: the inbox writes a consumer's positions in the same transaction as the keys and effects
 * they cover, for every outcome the flow acknowledges (processed, duplicate) and never for a rejected one (it is
 * dead-lettered after the commit); an effect that throws keeps no position; a position never moves back.
 */
class ConsumerPositionsIT {
    private static final String LOG = "topic-id-1";
    private static TestDatabase pg;
    private static PostgresInboxStore inbox;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start(4);
        inbox = new PostgresInboxStore(pg.db());
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    @Test
    void aPositionIsCommittedWithTheEffectAndWithADuplicateButNotWithARejectionOrAFailure() {
        String group = "g-" + UUID.randomUUID();
        String consumer = "c-" + UUID.randomUUID();
        assertThat(inbox.keepsPositions()).isTrue();
        assertThat(inbox.positions().read(group, "orders", 0)).isEmpty();

        inbox.runOnce(InboxKey.of(consumer, "m-1"), Fingerprint.of("a"), List.of(position(group, 0, 11)), w -> null);
        assertThat(next(group, 0)).as("with the processed effect").hasValue(11);

        Outcome duplicate = inbox.runOnce(InboxKey.of(consumer, "m-1"), Fingerprint.of("a"),
                List.of(position(group, 0, 12)), w -> null).outcome();
        assertThat(duplicate).isEqualTo(Outcome.DUPLICATE);
        assertThat(next(group, 0)).as("a duplicate is acknowledged: its position too").hasValue(12);

        Outcome rejected = inbox.runOnce(InboxKey.of(consumer, "m-1"), Fingerprint.of("other"),
                List.of(position(group, 0, 13)), w -> null).outcome();
        assertThat(rejected).isEqualTo(Outcome.rejected(Inbox.REUSED_ID));
        assertThat(next(group, 0)).as("a rejected delivery is dead-lettered after the commit: no position past it")
                .hasValue(12);

        assertThatThrownBy(() -> inbox.runOnce(InboxKey.of(consumer, "m-2"), Fingerprint.of("b"),
                List.of(position(group, 0, 14)), w -> {
                    throw new IllegalStateException("boom");
                })).hasMessage("boom");
        assertThat(next(group, 0)).as("rolled back with the effect").hasValue(12);

        inbox.runOnce(InboxKey.of(consumer, "m-3"), Fingerprint.of("c"), List.of(position(group, 0, 5)), w -> null);
        assertThat(next(group, 0)).as("never back (a consumer that lost the partition writes late)").hasValue(12);
        assertThat(next(group, 1)).as("another partition").isEmpty();
    }

    @Test
    void aPositionInAnotherLogReplacesTheRowEvenWhenItIsLower() {
        String group = "g-" + UUID.randomUUID();
        String consumer = "c-" + UUID.randomUUID();
        inbox.runOnce(InboxKey.of(consumer, "m-1"), Fingerprint.of("a"), List.of(position(group, 0, 1000)), w -> null);
        // the topic was deleted and created again: its offsets start over, under a new topic id
        inbox.runOnce(InboxKey.of(consumer, "m-2"), Fingerprint.of("b"), List.of(position(group, 0, 3, "topic-id-2")),
                w -> null);
        assertThat(inbox.positions().read(group, "orders", 0)).hasValue(position(group, 0, 3, "topic-id-2"));
        inbox.runOnce(InboxKey.of(consumer, "m-3"), Fingerprint.of("c"), List.of(position(group, 0, 2, "topic-id-2")),
                w -> null);
        assertThat(inbox.positions().read(group, "orders", 0)).as("within the new log, never back")
                .hasValue(position(group, 0, 3, "topic-id-2"));
    }

    @Test
    void aBatchCommitsThePositionsOfItsPartitionsUnlessOneOfItsDeliveriesIsRejected() {
        String group = "g-" + UUID.randomUUID();
        String consumer = "c-" + UUID.randomUUID();
        List<LogPosition> positions = List.of(position(group, 0, 40), position(group, 2, 7));
        List<Outcome> outcomes = inbox.runBatch(List.of(delivery(consumer, "a", "1"), delivery(consumer, "b", "2")),
                positions, (work, fresh) -> { });
        assertThat(outcomes).containsExactly(Outcome.PROCESSED, Outcome.PROCESSED);
        assertThat(next(group, 0)).hasValue(40);
        assertThat(next(group, 2)).hasValue(7);

        List<Outcome> withReused = inbox.runBatch(List.of(delivery(consumer, "c", "3"), delivery(consumer, "a", "x")),
                List.of(position(group, 0, 50)), (work, fresh) -> { });
        assertThat(withReused).containsExactly(Outcome.PROCESSED, Outcome.rejected(Inbox.REUSED_ID));
        assertThat(next(group, 0)).as("a rejected delivery in the batch: no position written").hasValue(40);

        assertThatThrownBy(() -> inbox.runBatch(List.of(delivery(consumer, "d", "4")),
                List.of(position(group, 0, 60)), (work, fresh) -> {
                    throw new IllegalStateException("boom");
                })).hasMessage("boom");
        assertThat(next(group, 0)).hasValue(40);
        assertThat(inbox.recorded(InboxKey.of(consumer, "d"))).isEmpty();
    }

    private static OptionalLong next(String group, int partition) {
        return inbox.positions().read(group, "orders", partition).filter(p -> p.logId().equals(LOG))
                .map(p -> OptionalLong.of(p.next())).orElse(OptionalLong.empty());
    }

    private static LogPosition position(String group, int partition, long next) {
        return position(group, partition, next, LOG);
    }

    private static LogPosition position(String group, int partition, long next, String log) {
        return new LogPosition(group, "orders", partition, next, log);
    }

    private static InboxDelivery delivery(String consumer, String id, String body) {
        return new InboxDelivery(InboxKey.of(consumer, id), Fingerprint.of(body));
    }
}
