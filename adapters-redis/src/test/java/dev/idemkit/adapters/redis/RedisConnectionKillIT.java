package dev.idemkit.adapters.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.StoreUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.client.codec.StringCodec;

/**
 * The server drops the store's connections ({@code CLIENT KILL} of every connection named after this test's
 * client, a round every 200 deliveries taken) while 16 threads deliver 600 messages twice each, half of them on
 * each path and combined into shared calls. Calls in flight fail, answers are lost, Redisson reconnects and sends
 * again: every message must still be counted exactly once, and every key end completed.
 */
class RedisConnectionKillIT {
    private static final Fingerprint BODY = Fingerprint.of("body");
    private static final int MESSAGES = 600;
    private static RedisTestServer redis;

    @BeforeAll
    static void connect() {
        redis = RedisTestServer.start("kill");
    }

    @AfterAll
    static void cleanUp() {
        redis.close();
    }

    /** Kills every connection of our client; how many. */
    private static int killOurConnections() throws Exception {
        String name = "name=" + RedisClients.clientName(redis.settings) + " ";
        int killed = 0;
        for (String client : RawRedis.command(redis.settings, "CLIENT", "LIST", "TYPE", "normal").split("\n")) {
            if (client.contains(name)) {
                String id = client.substring(3, client.indexOf(' '));
                if (RawRedis.command(redis.settings, "CLIENT", "KILL", "ID", id).equals(":1")) {
                    killed++;
                }
            }
        }
        return killed;
    }

    @Test
    void messagesAreCountedOnceWhileTheServerKeepsDroppingTheConnections() throws Exception {
        // a short lease: a claim whose answer was lost with its connection frees its key within a second
        RedisInboxStore store = new RedisInboxStore(redis.client, redis.settings.withLeaseTtl(Duration.ofSeconds(1))
                .withClaimWait(Duration.ofMillis(200)));
        String consumer = "consumer-" + UUID.randomUUID();
        List<Integer> deliveries = new ArrayList<>();
        for (int m = 0; m < MESSAGES; m++) {
            deliveries.add(m);
            deliveries.add(m);
        }
        Collections.shuffle(deliveries);
        AtomicInteger next = new AtomicInteger();
        AtomicInteger processed = new AtomicInteger();
        AtomicInteger failures = new AtomicInteger();
        AtomicBoolean running = new AtomicBoolean(true);
        ExecutorService pool = Executors.newFixedThreadPool(17);
        // kills follow progress, not the clock: a round every 200 deliveries taken (of 1200), however fast they go
        Future<Integer> killer = pool.submit(() -> {
            int rounds = 0;
            for (int mark = 0; running.get(); ) {
                if (next.get() >= mark) {
                    mark += 200;
                    if (killOurConnections() > 0) {
                        rounds++;
                    }
                } else {
                    Thread.sleep(1);
                }
            }
            return rounds;
        });
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < 16; t++) {
            int thread = t;
            workers.add(pool.submit(() -> {
                for (int i; (i = next.getAndIncrement()) < deliveries.size(); ) {
                    InboxKey key = InboxKey.of(consumer, "m-" + deliveries.get(i));
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                    while (true) {
                        try {
                            Outcome outcome = HundredKeysRace.countInClaimSlot(store, key, BODY, thread % 2 == 1);
                            if (outcome == Outcome.PROCESSED) {
                                processed.incrementAndGet();
                            }
                            break;
                        } catch (StoreUnavailableException retryable) { // connection lost, claim held or lost
                            failures.incrementAndGet();
                            if (System.nanoTime() > deadline) {
                                throw retryable;
                            }
                            Thread.sleep(20); // the broker would redeliver
                        }
                    }
                }
                return null;
            }));
        }
        for (Future<?> w : workers) {
            w.get(180, TimeUnit.SECONDS);
        }
        running.set(false);
        int kills = killer.get(10, TimeUnit.SECONDS);
        pool.shutdown();

        assertThat(kills).as("rounds in which the server dropped our connections while the deliveries ran")
                .isGreaterThanOrEqualTo(3);
        String counter = store.layout().data(KeyLayout.hashTag(store.layout().inbox(InboxKey.of(consumer, "x"))), "count");
        assertThat(redis.client.<String>getBucket(counter, StringCodec.INSTANCE).get()).as("effects applied").isEqualTo(Integer.toString(MESSAGES));
        assertThat(processed).as("deliveries answered PROCESSED (an answer lost with its connection is retried and"
                + " then seen as a duplicate)").hasValueLessThanOrEqualTo(MESSAGES);
        for (int m = 0; m < MESSAGES; m++) {
            assertThat(store.recorded(InboxKey.of(consumer, "m-" + m))).as("m-%d", m).contains(BODY);
        }
        System.out.printf("RedisConnectionKillIT: %d rounds of kills, %d retryable failures, %d PROCESSED answers%n",
                kills, failures.get(), processed.get());
    }
}
