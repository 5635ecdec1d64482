package dev.idemkit.adapters.redis;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.httpkey.KeyRecord;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Dedup checks per second against {@code redis-benchmark} running {@code SET key v NX PX} on the same server in
 * the same run (the ceiling for one round trip per check). Not a test: run it with the command in the README.
 * Each measurement runs for a fixed time; the whole run takes about two minutes.
 *
 * <p>Columns: duplicates (runOnce on a completed key: one claim call); the claim of a new key alone (the dedup
 * decision "new, run it", without effect and completion); new keys through {@code runOnceStaged}
 * (effect staged in Redis: one call); new keys through {@code runOnce} (claim, effect, completion: two calls, the
 * path for effects outside Redis). The effect is empty, so the store's own cost is what is measured.
 */
public final class RedisInboxBenchmark {
    private static final long SECONDS = Long.getLong("bench.seconds", 4);
    private static final Fingerprint BODY = Fingerprint.of("benchmark body");

    public static void main(String[] args) throws Exception {
        try (RedisTestServer redis = RedisTestServer.start("bench")) {
            RedisInboxStore store = new RedisInboxStore(redis.client, redis.settings);
            RedisBulkInbox bulk = new RedisBulkInbox(store);
            URI uri = URI.create(redis.settings.addresses().get(0));
            System.out.printf("server %s, prefix %s, %d s per measurement, %d cores%n", uri, redis.prefix(), SECONDS,
                    Runtime.getRuntime().availableProcessors());
            measure(16, i -> store.runOnce(InboxKey.of("warm", "m-" + i), BODY, w -> null));
            measure(16, i -> store.runOnceStaged(InboxKey.of("warm-staged", "m-" + i), BODY, w -> null));
            System.out.printf("%-7s %12s %12s %12s %12s %12s %9s %9s %9s %9s%n", "callers", "SET NX PX/s", "duplicates/s",
                    "new claim/s", "new 1-RT/s", "new 2-RT/s", "dup/SET", "claim/SET", "1-RT/SET", "2-RT/SET");
            for (int callers : new int[] {1, 16, 50}) {
                double set = redisBenchmark(uri, redis.prefix(), callers, 1);
                String consumer = "c" + callers;
                double fresh = measure(callers, i -> store.runOnce(InboxKey.of(consumer, "m-" + i), BODY, w -> null));
                double staged = measure(callers,
                        i -> store.runOnceStaged(InboxKey.of(consumer + "-staged", "m-" + i), BODY, w -> null));
                String claimer = consumer + "-claims";
                double claims = measure(callers, i -> {
                    InboxKey key = InboxKey.of(claimer, "m-" + i);
                    store.claim(key, store.layout().inbox(key), InboxAnswers.claimValue(BODY), BODY);
                });
                // the claims hold their keys for the lease: delete them now, or Redis spends the next measurements
                // expiring hundreds of thousands of keys (seen: batched numbers down 3x)
                redis.client.getKeys().deleteByPattern(redis.prefix() + ":inbox:{" + KeyLayout.enc(claimer) + "}:*");
                long seeded = Math.min((long) (fresh * SECONDS), 200_000);
                double dup = measure(callers, i -> store.runOnce(InboxKey.of(consumer, "m-" + (i % seeded)), BODY, w -> null));
                System.out.printf("%-7d %12.0f %12.0f %12.0f %12.0f %12.0f %9.2f %9.2f %9.2f %9.2f%n", callers, set, dup,
                        claims, staged, fresh, dup / set, claims / set, staged / set, fresh / set);
            }
            double setPipelined = redisBenchmark(uri, redis.prefix(), 16, 16);
            int batchSize = 100;
            double bulkNew = measure(16, i -> bulk.runEachOnce(batch("bulk", i, batchSize), (d, w) -> null)) * batchSize;
            double bulkStaged = measure(16,
                    i -> bulk.runEachOnceStaged(batch("bulk-staged", i, batchSize), (d, w) -> null)) * batchSize;
            double bulkDup = measure(16, i -> bulk.runEachOnce(batch("bulk", i % 200, batchSize), (d, w) -> null)) * batchSize;
            System.out.printf("pipelined: SET NX PX -P 16 -c 16: %.0f/s; batches of %d, 16 callers, checks/s: duplicates %.0f"
                    + " (%.2f), new 1-RT %.0f (%.2f), new 2-RT %.0f (%.2f)%n", setPipelined, batchSize, bulkDup,
                    bulkDup / setPipelined, bulkStaged, bulkStaged / setPipelined, bulkNew, bulkNew / setPipelined);
            memory(redis, store);
        }
    }

    private static List<InboxDelivery> batch(String consumer, long n, int size) {
        List<InboxDelivery> batch = new ArrayList<>(size);
        for (int j = 0; j < size; j++) {
            batch.add(new InboxDelivery(InboxKey.of(consumer, "b-" + n + "-" + j), BODY));
        }
        return batch;
    }

    /** Calls per second of {@code call} over {@link #SECONDS} with {@code callers} threads; call i gets a unique i. */
    private static double measure(int callers, IntConsumer call) throws Exception {
        AtomicLong next = new AtomicLong();
        long end = System.nanoTime() + SECONDS * 1_000_000_000L;
        CountDownLatch done = new CountDownLatch(callers);
        long start = System.nanoTime();
        for (int t = 0; t < callers; t++) {
            Thread thread = new Thread(() -> {
                try {
                    while (System.nanoTime() < end) {
                        call.accept((int) next.getAndIncrement());
                    }
                } finally {
                    done.countDown();
                }
            });
            thread.start();
        }
        done.await();
        return next.get() / ((System.nanoTime() - start) / 1e9);
    }

    /** redis-benchmark SET NX PX, keys under our prefix expiring after 5 s. */
    private static double redisBenchmark(URI uri, String prefix, int clients, int pipeline) throws Exception {
        int n = clients == 1 ? 30_000 : 200_000 * Math.max(1, pipeline / 4);
        Process p = new ProcessBuilder("redis-benchmark", "-h", uri.getHost(), "-p", String.valueOf(uri.getPort()), "-q",
                "-n", String.valueOf(n), "-c", String.valueOf(clients), "-P", String.valueOf(pipeline), "-r", "1000000",
                "SET", prefix + ":rb:__rand_int__", "v", "NX", "PX", "5000").redirectErrorStream(true).start();
        String out;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            out = String.join("\n", r.lines().toList());
        }
        p.waitFor();
        Matcher m = Pattern.compile("([0-9.]+) requests per second").matcher(out.replace('\r', '\n'));
        double last = Double.NaN;
        while (m.find()) {
            last = Double.parseDouble(m.group(1));
        }
        return last;
    }

    private static void memory(RedisTestServer redis, RedisInboxStore store) {
        InboxKey key = InboxKey.of("consumer-name", "0f8fad5b-d9cb-469f-a165-70867728950e");
        store.runOnce(key, BODY, w -> null);
        long inbox = redis.client.getBucket(store.layout().inbox(key)).sizeInMemory();
        RedisIdempotencyRecords records = new RedisIdempotencyRecords(redis.client, redis.settings);
        ScopedKey scoped = ScopedKey.of("client-42", "0f8fad5b-d9cb-469f-a165-70867728950e");
        KeyRecord.InProgress running = ((dev.idemkit.ports.out.IdempotencyRecords.Begin.Claimed) records.tryBegin(
                scoped, BODY, "0f8fad5b-d9cb-469f-a165-70867728950e", java.time.Duration.ofSeconds(60))).claim();
        byte[] body = "{\"id\":\"order-42\",\"status\":\"created\",\"amount\":1999}".getBytes(StandardCharsets.UTF_8);
        records.complete(scoped, running, new StoredResponse(201, Map.of("Content-Type", "application/json"), body),
                java.time.Duration.ofDays(1));
        long record = redis.client.getKeys().getKeysStreamByPattern(redis.prefix() + ":idem:*")
                .mapToLong(k -> redis.client.getBucket(k).sizeInMemory()).sum();
        System.out.printf("MEMORY USAGE: completed inbox key %d bytes (key %d chars); Idempotency-Key record with a %d-byte"
                + " body %d bytes%n", inbox, store.layout().inbox(key).length(), body.length, record);
    }
}
