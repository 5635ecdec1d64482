package dev.idemkit.adapters.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * The position a store writes with a transaction's effects (offsets in the database): {@link
 * PartitionLedger#positionAfter} over random fetches, hand-overs, settles and give-backs of one partition. Whatever
 * happened before, once the records of the transaction are settled the commit point is exactly that position (had
 * nothing else changed), and no record that is still unsettled lies below it: a consumer that starts there skips only
 * settled records. (A record handed out twice, fetched again after a give-back of an earlier one while its own first
 * delivery ran on, is settled once either copy settles: its effect is committed.)
 */
class PartitionPositionProperties {
    private static final TopicPartition TP = new TopicPartition("orders", 0);

    /** One step: 0 fetch up to 5 more, 1 hand one over, 2 settle the k-th in flight, 3 give the k-th back. */
    private record Step(int kind, int k) {}

    @Test
    void thePositionAfterATransactionIsTheCommitPointOnceItsRecordsAreSettledAndNeverPassesAnUnsettledRecord() {
        qt().withExamples(1000).forAll(lists().of(integers().between(0, 3).zip(integers().between(0, 20), Step::new))
                .ofSizeBetween(1, 80), integers().between(1, 5)).checkAssert((steps, together) -> {
                    PartitionLedger ledger = new PartitionLedger(TP, Optional.empty(), 1000);
                    List<Long> inFlight = new ArrayList<>();
                    Set<Long> settled = new HashSet<>();
                    long fetched = 0;
                    for (Step s : steps) {
                        switch (s.kind()) {
                            case 0 -> {
                                List<ConsumerRecord<byte[], byte[]>> batch = new ArrayList<>();
                                for (int i = 0; i < 1 + s.k() % 5; i++) {
                                    batch.add(record(fetched++));
                                }
                                ledger.accept(batch);
                            }
                            case 1 -> {
                                if (ledger.next(0, Integer.MAX_VALUE, false, 0, r -> true)
                                        instanceof PartitionLedger.Next.Dispatch d) {
                                    inFlight.add(d.record().offset());
                                }
                            }
                            case 2 -> {
                                if (!inFlight.isEmpty()) {
                                    // a record handed out twice (fetched again after an earlier give-back while its
                                    // first delivery ran on) is settled by whichever copy settles first; a copy still
                                    // queued then is handed out later all the same (the inbox absorbs it)
                                    Long done = inFlight.get(s.k() % inFlight.size());
                                    ledger.settle(done);
                                    inFlight.removeIf(done::equals);
                                    settled.add(done);
                                }
                            }
                            default -> {
                                if (!inFlight.isEmpty()) {
                                    long back = inFlight.remove(s.k() % inFlight.size());
                                    ledger.giveBack(back, Duration.ZERO, 0);
                                    fetched = Math.min(fetched, back); // the poll thread seeks back there
                                    ledger.seekApplied(back);
                                    ledger.resumeIfDue(0);
                                }
                            }
                        }
                    }
                    // a transaction of up to `together` records in flight
                    Set<Long> transaction = new HashSet<>(inFlight.subList(0, Math.min(together, inFlight.size())));
                    long position = ledger.positionAfter(transaction);
                    TreeSet<Long> stillOpen = new TreeSet<>(inFlight);
                    stillOpen.removeAll(transaction);
                    stillOpen.removeAll(settled); // a copy handed out after its record settled: already done
                    if (!stillOpen.isEmpty()) {
                        assertThat(position).as("below every record left in flight %s", stillOpen)
                                .isLessThanOrEqualTo(stillOpen.first());
                    }
                    transaction.forEach(ledger::settle);
                    assertThat(position).as("the commit point once %s settled", transaction)
                            .isEqualTo(ledger.commitPoint());
                });
    }

    private static ConsumerRecord<byte[], byte[]> record(long offset) {
        return new ConsumerRecord<>(TP.topic(), TP.partition(), offset, "k".getBytes(StandardCharsets.UTF_8),
                "v".getBytes(StandardCharsets.UTF_8));
    }
}
