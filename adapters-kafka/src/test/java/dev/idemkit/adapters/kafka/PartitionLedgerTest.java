package dev.idemkit.adapters.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

/** The partition ledger's rules, without a broker: what is committed, blocked, fetched again and handed over. */
class PartitionLedgerTest {
    private static final TopicPartition WORK = new TopicPartition("orders", 0);
    private static final TopicPartition RETRY = new TopicPartition("orders.retry.5s", 0);

    private static ConsumerRecord<byte[], byte[]> record(TopicPartition tp, long offset) {
        return new ConsumerRecord<>(tp.topic(), tp.partition(), offset, "k".getBytes(StandardCharsets.UTF_8),
                "v".getBytes(StandardCharsets.UTF_8));
    }

    private static List<ConsumerRecord<byte[], byte[]>> records(TopicPartition tp, long from, long to) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        for (long o = from; o < to; o++) {
            out.add(record(tp, o));
        }
        return out;
    }

    /** Hands over everything due now, in order. */
    private static List<Long> drain(PartitionLedger ledger, long nowMillis) {
        List<Long> handed = new ArrayList<>();
        while (ledger.next(0, Integer.MAX_VALUE, false, nowMillis, r -> true) instanceof PartitionLedger.Next.Dispatch d) {
            handed.add(d.record().offset());
        }
        return handed;
    }

    @Test
    void theCommitPointNeverPassesARecordThatIsNotSettled() {
        PartitionLedger ledger = new PartitionLedger(WORK, Optional.empty(), 100);
        assertThat(ledger.commitPoint()).as("nothing fetched: nothing to commit").isEqualTo(-1);
        assertThat(ledger.accept(records(WORK, 0, 10)).scheduleDrain()).isTrue();
        assertThat(drain(ledger, 0)).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
        for (long o = 0; o < 10; o++) {
            if (o != 3) {
                ledger.settle(o);
            }
        }
        assertThat(ledger.commitPoint()).isEqualTo(3);
        assertThat(ledger.dispatchedAllSettled()).isFalse();
        ledger.settle(3);
        assertThat(ledger.commitPoint()).isEqualTo(10);
        assertThat(ledger.dispatchedAllSettled()).isTrue();
    }

    @Test
    void aPartitionStartedAtAStoredPositionCommitsItBeforeAnythingIsFetchedAndSkipsWhatLiesBelow() {
        PartitionLedger ledger = new PartitionLedger(WORK, Optional.empty(), 100);
        ledger.startAt(7);
        assertThat(ledger.commitPoint()).as("Kafka's offset catches up with the stored one").isEqualTo(7);
        ledger.accept(records(WORK, 5, 10)); // a fetch from before the seek
        assertThat(drain(ledger, 0)).containsExactly(7L, 8L, 9L);
        assertThat(ledger.positionAfter(java.util.Set.of(7L))).isEqualTo(8);
        assertThat(ledger.positionAfter(java.util.Set.of(8L))).as("7 is still open").isEqualTo(7);
        ledger.startAt(3);
        assertThat(ledger.commitPoint()).as("a second start changes nothing once fetched").isEqualTo(7);
    }

    @Test
    void aGiveBackBlocksTheRecordAndEverythingAfterItUntilTheyAreFetchedAgainAndThePauseIsOver() {
        PartitionLedger ledger = new PartitionLedger(WORK, Optional.empty(), 100);
        ledger.accept(records(WORK, 0, 6));
        assertThat(drain(ledger, 0)).hasSize(6);
        ledger.settle(0);
        ledger.settle(1);
        PartitionLedger.GiveBack first = ledger.giveBack(2, Duration.ofMillis(100), 1_000);
        assertThat(first.times()).isEqualTo(1);
        assertThat(first.pauseMillis()).isEqualTo(100);
        ledger.settle(3); // a later record's ack after the give-back changes nothing: it comes again
        assertThat(ledger.commitPoint()).as("never past the given-back record").isEqualTo(2);
        assertThat(ledger.pendingSeek()).hasValue(2);
        assertThat(ledger.resumeIfDue(5_000)).as("never lifted before its seek was applied").isFalse();
        ledger.seekApplied(2);
        assertThat(ledger.pendingSeek()).as("applied once").isEmpty();
        assertThat(ledger.resumeIfDue(1_050)).as("still paused").isFalse();
        ledger.accept(records(WORK, 4, 6)); // a poll that was under way: at or after the block, dropped
        assertThat(drain(ledger, 1_050)).isEmpty();
        assertThat(ledger.resumeIfDue(1_100)).isTrue();
        ledger.accept(records(WORK, 2, 6));
        assertThat(drain(ledger, 1_100)).containsExactly(2L, 3L, 4L, 5L);
    }

    @Test
    void aRecordGivenBackAgainAndAgainWaitsTwiceAsLongEachTimeUpToFiveMinutes() {
        PartitionLedger ledger = new PartitionLedger(WORK, Optional.empty(), 100);
        List<Long> pauses = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            ledger.accept(List.of(record(WORK, 0)));
            drain(ledger, Long.MAX_VALUE);
            pauses.add(ledger.giveBack(0, Duration.ofSeconds(1), 0).pauseMillis());
            ledger.seekApplied(ledger.pendingSeek().getAsLong());
            ledger.resumeIfDue(Long.MAX_VALUE);
        }
        assertThat(pauses.subList(0, 4)).containsExactly(1_000L, 2_000L, 4_000L, 8_000L);
        assertThat(pauses.get(15)).isEqualTo(PartitionLedger.MAX_REWIND_PAUSE.toMillis());
        ledger.accept(List.of(record(WORK, 0)));
        drain(ledger, Long.MAX_VALUE);
        ledger.settle(0);
        assertThat(ledger.giveBack(0, Duration.ofSeconds(1), 0).times()).as("a settle resets the count").isEqualTo(1);
    }

    @Test
    void twoBlocksInEitherOrderEndAtTheLowerOffsetAndALateGiveBackNeverSkipsForward() {
        PartitionLedger ledger = new PartitionLedger(WORK, Optional.empty(), 100);
        ledger.accept(records(WORK, 0, 10));
        drain(ledger, 0);
        ledger.giveBack(7, Duration.ofMillis(10), 0);
        ledger.giveBack(4, Duration.ofMillis(10), 0);
        ledger.giveBack(6, Duration.ofMillis(10), 0);
        assertThat(ledger.pendingSeek()).hasValue(4);
        assertThat(ledger.commitPoint()).isEqualTo(0);
        ledger.seekApplied(7); // an older seek reported late: the lower block stays pending
        assertThat(ledger.pendingSeek()).hasValue(4);
    }

    @Test
    void aRetryCopyThatIsNotDueBlocksItsPartitionUntilItIsAndAnotherGroupsCopyIsSettledAtOnce() {
        PartitionLedger ledger = new PartitionLedger(RETRY, Optional.of(Duration.ofSeconds(5)), 100);
        RecordHeaders due = new RecordHeaders();
        KafkaWire.put(due, KafkaWire.DUE_AT, "3000");
        ConsumerRecord<byte[], byte[]> theirs = record(RETRY, 0);
        ConsumerRecord<byte[], byte[]> mine = new ConsumerRecord<>(RETRY.topic(), 0, 1, 1_000L,
                TimestampType.LOG_APPEND_TIME, 1, 1, "k".getBytes(StandardCharsets.UTF_8),
                "v".getBytes(StandardCharsets.UTF_8), due, Optional.empty());
        ledger.accept(List.of(theirs, mine));
        PartitionLedger.Next next = ledger.next(0, 64, false, 2_000, r -> r.offset() != 0);
        assertThat(next).isInstanceOf(PartitionLedger.Next.Stop.class);
        assertThat(ledger.pendingSeek()).as("blocked at the copy that is not due").hasValue(1);
        ledger.seekApplied(1);
        assertThat(ledger.commitPoint()).as("the other group's copy is settled, this one not").isEqualTo(1);
        assertThat(ledger.resumeIfDue(2_999)).isFalse();
        assertThat(ledger.resumeIfDue(3_000)).isTrue();
        ledger.accept(List.of(mine));
        assertThat(drain(ledger, 3_000)).containsExactly(1L);
    }

    @Test
    void aForgedDueTimeCannotHoldABucketBackLongerThanTheBucket() {
        RecordHeaders forged = new RecordHeaders();
        KafkaWire.put(forged, KafkaWire.DUE_AT, Long.toString(Long.MAX_VALUE));
        ConsumerRecord<byte[], byte[]> r = new ConsumerRecord<>(RETRY.topic(), 0, 0, 10_000L,
                TimestampType.LOG_APPEND_TIME, 1, 1, new byte[1], new byte[1], forged, Optional.empty());
        assertThat(KafkaTopics.dueAt(r, Duration.ofSeconds(5))).isEqualTo(15_000L);
        RecordHeaders unreadable = new RecordHeaders();
        KafkaWire.put(unreadable, KafkaWire.DUE_AT, "soon");
        assertThat(KafkaTopics.dueAt(new ConsumerRecord<>(RETRY.topic(), 0, 0, 10_000L, TimestampType.LOG_APPEND_TIME,
                1, 1, new byte[1], new byte[1], unreadable, Optional.empty()), Duration.ofSeconds(5))).isZero();
    }

    @Test
    void tooMuchQueuedPausesThePartitionAndHalfOfItResumesIt() {
        PartitionLedger ledger = new PartitionLedger(WORK, Optional.empty(), 10);
        PartitionLedger.Accepted accepted = ledger.accept(records(WORK, 0, 10));
        assertThat(accepted.pause()).isTrue();
        assertThat(ledger.backpressured()).isTrue();
        assertThat(ledger.resumeIfDue(0)).isFalse();
        for (int i = 0; i < 5; i++) {
            ledger.next(0, 64, false, 0, r -> true);
        }
        assertThat(ledger.resumeIfDue(0)).as("five left of ten").isTrue();
        assertThat(ledger.backpressured()).isFalse();
    }

    @Test
    void aRevokedPartitionHandsNothingOverAndKeepsItsQueueUnsettled() {
        PartitionLedger ledger = new PartitionLedger(WORK, Optional.empty(), 100);
        ledger.accept(records(WORK, 0, 3));
        ledger.revoke();
        assertThat(ledger.next(0, 64, false, 0, r -> true)).isInstanceOf(PartitionLedger.Next.Stop.class);
        assertThat(ledger.commitPoint()).isZero();
        ledger.giveBack(0, Duration.ofSeconds(1), 0);
        assertThat(ledger.pendingSeek()).as("no seek for a partition that left").isEmpty();
    }
}
