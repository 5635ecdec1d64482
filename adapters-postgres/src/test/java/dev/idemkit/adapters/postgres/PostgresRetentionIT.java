package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.inbox.InboxKey;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Retention deletes old inbox keys in bounded batches and reports how many. */
class PostgresRetentionIT {
    private static TestDatabase pg;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start();
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    @Test
    void keysOlderThanTheTtlAreDeletedInBatchesAndRecentOnesStay() {
        PostgresInboxStore inbox = new PostgresInboxStore(pg.db());
        String consumer = "retention-" + UUID.randomUUID();
        for (int i = 0; i < 25; i++) {
            inbox.runOnce(InboxKey.of(consumer, "m-" + i), Fingerprint.of("b"), w -> null);
        }
        pg.execute("UPDATE processed_messages SET processed_at = now() - interval '8 days' "
                + "WHERE consumer = '" + consumer + "' AND message_id <> 'm-0'");
        PostgresRetention retention = new PostgresRetention(pg.db());

        PostgresRetention.Report first = retention.purge(Instant.now(), Duration.ofDays(7), 10, 2);
        assertThat(first.processedMessages()).as("two batches of 10, bounded").isEqualTo(20);
        PostgresRetention.Report second = retention.purge(Instant.now(), Duration.ofDays(7), 10, 2);
        assertThat(second.processedMessages()).isEqualTo(4);

        assertThat(inbox.recorded(InboxKey.of(consumer, "m-0"))).isPresent();
        assertThat(inbox.recorded(InboxKey.of(consumer, "m-1"))).isEmpty();
        assertThat(pg.queryLong("SELECT count(*) FROM processed_messages WHERE consumer = ?", consumer)).isOne();
    }
}
