package dev.idemkit.adapters.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.inbox.InboxKey;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/** Laws of the key layout: injective on caller-given parts, and the hash tag is always ours. */
class KeyLayoutProperties {
    private static final KeyLayout LAYOUT = new KeyLayout("idemkit", RedisSettings.HashTagScope.CONSUMER);
    private static final KeyLayout PER_MESSAGE = new KeyLayout("idemkit", RedisSettings.HashTagScope.MESSAGE);

    /** Keys drawn from an alphabet rich in separators and braces, 1..8 characters: collisions would show fast. */
    private static Gen<String> tricky() {
        List<Character> alphabet = List.of(':', '{', '}', '.', '-', '_', 'a', 'b', '=', '*');
        return lists().of(Generate.pick(alphabet)).ofSizeBetween(1, 8)
                .map(cs -> cs.stream().map(String::valueOf).collect(Collectors.joining()));
    }

    /** Law: two different (client, key) pairs never map to the same record key. */
    @Test
    void differentScopedKeysNeverShareARecordKey() {
        qt().withExamples(1000).forAll(tricky(), tricky(), tricky(), tricky())
                .assuming((c1, k1, c2, k2) -> !(c1.equals(c2) && k1.equals(k2)))
                .check((c1, k1, c2, k2) -> !LAYOUT.record(ScopedKey.of(c1, k1)).equals(LAYOUT.record(ScopedKey.of(c2, k2))));
    }

    /** Law: two different (consumer, message id) pairs never map to the same inbox key, in either hash-tag scope. */
    @Test
    void differentInboxKeysNeverShareARedisKey() {
        qt().withExamples(1000).forAll(tricky(), tricky(), tricky(), tricky())
                .assuming((c1, m1, c2, m2) -> !(c1.equals(c2) && m1.equals(m2)))
                .check((c1, m1, c2, m2) -> !LAYOUT.inbox(InboxKey.of(c1, m1)).equals(LAYOUT.inbox(InboxKey.of(c2, m2)))
                        && !PER_MESSAGE.inbox(InboxKey.of(c1, m1)).equals(PER_MESSAGE.inbox(InboxKey.of(c2, m2))));
    }

    /** Law: the hash tag of a key is the one the layout put there, whatever braces the caller's parts hold. */
    @Test
    void hashTagIsAlwaysTheLayoutsOwn() {
        qt().withExamples(1000).forAll(tricky(), tricky()).checkAssert((c, m) -> {
            assertThat(KeyLayout.hashTag(LAYOUT.inbox(InboxKey.of(c, m)))).isEqualTo("{" + KeyLayout.enc(c) + "}");
            assertThat(KeyLayout.hashTag(LAYOUT.record(ScopedKey.of(c, m))))
                    .isEqualTo("{" + KeyLayout.enc(c) + "." + KeyLayout.enc(m) + "}");
        });
    }

    @Test
    void slotsFollowRedisClusterRules() {
        assertThat(KeyLayout.slot("foo")).as("CLUSTER KEYSLOT foo").isEqualTo(12182);
        assertThat(KeyLayout.slot("{user1000}.following")).isEqualTo(KeyLayout.slot("{user1000}.followers"))
                .isEqualTo(KeyLayout.slot("user1000"));
        // expected values as a Redis 7.0.15 in cluster mode answered CLUSTER KEYSLOT
        assertThat(KeyLayout.slot("{user1000}.following")).isEqualTo(3443);
        assertThat(KeyLayout.slot("foo{}{bar}")).as("an empty tag hashes the whole key").isEqualTo(8363)
                .isNotEqualTo(KeyLayout.slot("bar"));
        assertThat(KeyLayout.slot("foo{{bar}}zap")).as("the tag is what lies between the first { and the next }")
                .isEqualTo(4015);
    }
}
