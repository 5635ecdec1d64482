package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.Inbox;
import dev.idemkit.domain.inbox.InboxKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Many instances delivering the same keys at once: the unique index decides, each effect runs once. */
class ConcurrentDeliveriesIT {
    private static final int THREADS = 32;
    private static final int KEYS = 100;
    private static TestDatabase pg;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start(16);
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    /**
     * The second delivery's insert waits for the first's uncommitted row; once that commits, the row is not
     * visible to the second statement's snapshot, so the delivery runs again in a new transaction: it is still
     * decided on the first's fingerprint (duplicate, or a reused id), and its effect does not run.
     */
    @Test
    void aDeliveryThatWaitedForAConcurrentInsertOfItsKeyIsDecidedOnThatKey() throws Exception {
        PostgresInboxStore inbox = new PostgresInboxStore(pg.db());
        String consumer = "c-" + UUID.randomUUID();
        String account = "acc-" + UUID.randomUUID();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            for (String firstBody : List.of("body", "another body")) {
                InboxKey key = InboxKey.of(consumer, "m-" + firstBody.length());
                try (Connection first = pg.connection()) {
                    try (PreparedStatement ps = first.prepareStatement(PostgresInboxStore.INSERT_KEY)) {
                        ps.setString(1, consumer);
                        ps.setString(2, key.messageId().value());
                        ps.setString(3, Fingerprint.of(firstBody).hex());
                        assertThat(ps.executeUpdate()).isEqualTo(1);
                    }
                    Future<Outcome> second = pool.submit(() -> inbox.runOnce(key, Fingerprint.of("body"), work -> {
                        Accounts.credit(work, account, 1);
                        return null;
                    }).outcome());
                    await().atMost(Duration.ofSeconds(10)).until(() -> pg.queryLong("SELECT count(*) FROM"
                            + " pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE ?",
                            "%INSERT INTO processed_messages%") > 0);
                    assertThat(second).as("waiting on the first's row").isNotDone();
                    first.commit();
                    assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo(firstBody.equals("body")
                            ? Outcome.DUPLICATE : Outcome.rejected(Inbox.REUSED_ID));
                }
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(new Accounts(pg).balance(account)).isZero();
    }

    @Test
    void thirtyTwoThreadsDeliveringTheSameHundredKeysCreditExactlyOneHundred() throws Exception {
        PostgresInboxStore inbox = new PostgresInboxStore(pg.db());
        String account = "acc-" + UUID.randomUUID();
        String consumer = "c-" + UUID.randomUUID();
        AtomicInteger processed = new AtomicInteger();
        AtomicInteger duplicates = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                long seed = t;
                done.add(pool.submit(() -> {
                    List<Integer> order = new ArrayList<>();
                    for (int k = 0; k < KEYS; k++) {
                        order.add(k);
                    }
                    Collections.shuffle(order, new Random(seed));
                    go.await();
                    for (int k : order) {
                        Outcome o = inbox.runOnce(InboxKey.of(consumer, "m-" + k), Fingerprint.of("credit 1 #" + k), work -> {
                            Accounts.credit(work, account, 1);
                            return null;
                        }).outcome();
                        (o.effectRan() ? processed : duplicates).incrementAndGet();
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }

        assertThat(new Accounts(pg).balance(account)).isEqualTo(KEYS);
        assertThat(processed.get()).isEqualTo(KEYS);
        assertThat(duplicates.get()).isEqualTo(THREADS * KEYS - KEYS);
        assertThat(pg.queryLong("SELECT count(*) FROM processed_messages WHERE consumer = ?", consumer)).isEqualTo(KEYS);
    }
}
