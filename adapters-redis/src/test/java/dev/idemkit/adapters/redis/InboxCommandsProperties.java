package dev.idemkit.adapters.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.idemkit.domain.inbox.InboxKey;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

/** Laws of cutting a batch into script calls: nothing lost or doubled, order kept, one slot and a bounded size per call. */
class InboxCommandsProperties {
    private static final KeyLayout PER_CONSUMER = new KeyLayout("idemkit", RedisSettings.HashTagScope.CONSUMER);
    private static final KeyLayout PER_MESSAGE = new KeyLayout("idemkit", RedisSettings.HashTagScope.MESSAGE);

    /** Batches of 0..700 keys (so that some exceed the 256 per call) over 1..8 consumers, either hash-tag scope. */
    private static Gen<List<String>> batches() {
        Gen<InboxKey> key = integers().between(0, 7).zip(integers().between(0, 5_000),
                (c, m) -> InboxKey.of("consumer-" + c, "m-" + m));
        return integers().between(0, 1).zip(lists().of(key).ofSizeBetween(0, 700), (scope, keys) -> {
            KeyLayout layout = scope == 0 ? PER_CONSUMER : PER_MESSAGE;
            return keys.stream().map(layout::inbox).toList();
        });
    }

    @Test
    void everyKeyIsInExactlyOneCallInItsOriginalOrder() {
        qt().withExamples(1000).forAll(batches(), integers().between(0, 1)).checkAssert((keys, cluster) -> {
            List<Integer> seen = new ArrayList<>();
            InboxCommands.groups(keys, cluster == 1).forEach(seen::addAll);
            assertThat(seen).containsExactlyInAnyOrderElementsOf(IntStream.range(0, keys.size()).boxed().toList());
            for (List<Integer> group : InboxCommands.groups(keys, cluster == 1)) {
                assertThat(group).isSorted();
            }
        });
    }

    @Test
    void eachCallHoldsAtMostTheMaximumAndOnAClusterOneSlot() {
        qt().withExamples(1000).forAll(batches(), integers().between(0, 1)).checkAssert((keys, cluster) -> {
            for (List<Integer> group : InboxCommands.groups(keys, cluster == 1)) {
                assertThat(group).isNotEmpty().hasSizeLessThanOrEqualTo(InboxCommands.MAX_KEYS_PER_CALL);
                if (cluster == 1) {
                    assertThat(group.stream().map(i -> KeyLayout.slot(keys.get(i))).distinct()).hasSize(1);
                }
            }
        });
    }

    @Test
    void aSingleServerBatchNeedsOnlyAsManyCallsAsTheMaximumRequires() {
        qt().withExamples(1000).forAll(batches()).checkAssert(keys -> assertThat(InboxCommands.groups(keys, false))
                .hasSize((keys.size() + InboxCommands.MAX_KEYS_PER_CALL - 1) / InboxCommands.MAX_KEYS_PER_CALL));
    }
}
