package dev.idemkit.benchmarks;

import dev.idemkit.app.http.ApiKeys;
import dev.idemkit.app.http.ApiServer;
import dev.idemkit.app.http.PaymentsApi;
import dev.idemkit.app.metrics.Metrics;
import dev.idemkit.app.payments.PaymentCharger;
import dev.idemkit.app.payments.PaymentLedger;
import dev.idemkit.domain.httpkey.ClientId;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Replays of one stored {@code POST /payments} response: the payments API on a free port, one payment
 * made with a key, then the SAME request with the same key from {@code clients} connections for a while.
 *
 * <p>With {@code wrk} on the path (Debian's package) the load comes from it, a separate process, in three
 * rows of one run: a static handler answering the stored response's exact status, headers and bytes on the
 * JDK's HttpServer as {@code serve} ran it before issue 29 (the server it replaced, for comparison), the same
 * static handler on {@link ApiServer} (Jetty: the ceiling of the server itself), then the payments API. wrk's Lua script checks every response (status 201, byte-identical
 * body, {@code Idempotent-Replayed}) and counts the ones that are not. Without wrk the load is
 * {@code java.net.http.HttpClient} threads in this JVM, timed with {@link System#nanoTime()} (they share
 * the CPU with the server, so that row reads lower than the server can do). The account must hold
 * exactly one charge at the end.
 *
 * @param runs what was measured, the ceiling second to last when there is one
 * @param charges charge rows for the account afterwards (1 is correct)
 */
record HttpReplays(java.util.List<Run> runs, long charges) {

    /** One measured load. {@code wrong}: responses that were not the byte-identical replay (or failed). */
    record Run(String what, String load, long requests, double seconds, long p50Micros, long p99Micros, long wrong) {
        double rate() {
            return requests / seconds;
        }
    }

    long wrong() {
        return runs.stream().mapToLong(Run::wrong).sum();
    }

    /** The payments API's replays: the last run. */
    Run replays() {
        return runs.get(runs.size() - 1);
    }

    static HttpReplays run(PaymentCharger charger, PaymentLedger ledger, Metrics metrics, int clients,
            Duration duration) throws Exception {
        String apiKey = "bench-" + UUID.randomUUID();
        String account = "acc-bench-" + UUID.randomUUID();
        String key = UUID.randomUUID().toString();
        byte[] body = ("{\"amount\": 150.00, \"currency\": \"BRL\", \"account_id\": \"" + account + "\"}")
                .getBytes(StandardCharsets.UTF_8);
        List<Run> runs = new ArrayList<>();
        try (ApiServer api = ApiServer.start(new InetSocketAddress("127.0.0.1", 0), new PaymentsApi(charger, ledger,
                ApiKeys.of(Map.of("bench", apiKey)), metrics, Map::of))) {
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(5)).build();
            URI uri = URI.create("http://127.0.0.1:" + api.port() + "/payments");
            HttpRequest request = HttpRequest.newBuilder(uri)
                    .timeout(Duration.ofSeconds(10)).header("Authorization", "Bearer " + apiKey)
                    .header("Idempotency-Key", key).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
            HttpResponse<byte[]> first = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
            if (first.statusCode() != 201) {
                throw new IllegalStateException("the first payment answered " + first.statusCode() + ": "
                        + new String(first.body(), StandardCharsets.UTF_8));
            }
            if (Wrk.available()) {
                Wrk wrk = new Wrk(apiKey, key, body, first.statusCode(), first.body());
                com.sun.net.httpserver.HttpServer jdk = jdkServer(staticReplay(first));
                try {
                    runs.add(wrk.run("static handler, JDK HttpServer on 128 threads (serve's server before issue 29)",
                            "http://127.0.0.1:" + jdk.getAddress().getPort() + "/payments", clients, duration));
                } finally {
                    jdk.stop(0);
                    ((java.util.concurrent.ExecutorService) jdk.getExecutor()).shutdownNow();
                }
                try (ApiServer ceiling = ApiServer.start(new InetSocketAddress("127.0.0.1", 0),
                        staticReplay(first))) {
                    runs.add(wrk.run("static handler, same server (Jetty, ApiServer): the server's ceiling",
                            "http://127.0.0.1:" + ceiling.port() + "/payments", clients, duration));
                }
                runs.add(wrk.run("payments API, same request and Idempotency-Key",
                        uri.toString(), clients, duration));
            } else {
                runs.add(hammer(http, request, first, clients, duration));
            }
            return new HttpReplays(runs, ledger.forAccount(new ClientId("bench"), account, 1000).size());
        }
    }

    /** The JDK server as {@code serve} ran it before issue 29: 128 threads, TCP_NODELAY, no limits. */
    private static com.sun.net.httpserver.HttpServer jdkServer(com.sun.net.httpserver.HttpHandler handler)
            throws java.io.IOException {
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true"); // read when the server classes load: now
        }
        com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer.create(
                new InetSocketAddress("127.0.0.1", 0), 512);
        server.setExecutor(java.util.concurrent.Executors.newFixedThreadPool(128, r -> {
            Thread t = new Thread(r, "bench-jdk-http");
            t.setDaemon(true);
            return t;
        }));
        server.createContext("/", handler);
        server.start();
        return server;
    }

    /** Answers every request with the stored response's status, headers and bytes, after reading the body. */
    private static com.sun.net.httpserver.HttpHandler staticReplay(HttpResponse<byte[]> first) {
        String contentType = first.headers().firstValue("Content-Type").orElse("application/json");
        byte[] bytes = first.body();
        return ex -> {
            try (java.io.InputStream in = ex.getRequestBody()) {
                in.readAllBytes();
            }
            ex.getResponseHeaders().set("Content-Type", contentType);
            ex.getResponseHeaders().set("Idempotent-Replayed", "true");
            ex.sendResponseHeaders(first.statusCode(), bytes.length);
            try (java.io.OutputStream out = ex.getResponseBody()) {
                out.write(bytes);
            }
        };
    }

    private static Run hammer(HttpClient http, HttpRequest request, HttpResponse<byte[]> first, int clients,
            Duration duration) throws Exception {
        AtomicLong wrong = new AtomicLong();
        AtomicReference<Exception> failure = new AtomicReference<>();
        List<long[]> latencies = new ArrayList<>();
        int[] counts = new int[clients];
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        long[] window = new long[2];
        for (int t = 0; t < clients; t++) {
            int me = t;
            latencies.add(new long[1 << 16]);
            Thread th = new Thread(() -> {
                try {
                    start.await();
                    long end = window[1];
                    long[] mine = latencies.get(me);
                    int n = 0;
                    while (System.nanoTime() < end) {
                        long t0 = System.nanoTime();
                        HttpResponse<byte[]> r = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
                        long took = System.nanoTime() - t0;
                        if (r.statusCode() != first.statusCode() || !Arrays.equals(r.body(), first.body())
                                || r.headers().firstValue("Idempotent-Replayed").isEmpty()) {
                            wrong.incrementAndGet();
                        }
                        if (n == mine.length) {
                            mine = Arrays.copyOf(mine, n * 2);
                            latencies.set(me, mine);
                        }
                        mine[n++] = took;
                    }
                    counts[me] = n;
                } catch (Exception e) {
                    failure.compareAndSet(null, e);
                }
            }, "idemkit-bench-http-" + t);
            th.start();
            threads.add(th);
        }
        window[0] = System.nanoTime();
        window[1] = window[0] + duration.toNanos();
        start.countDown();
        for (Thread th : threads) {
            th.join();
        }
        double seconds = (System.nanoTime() - window[0]) / 1e9;
        if (failure.get() != null) {
            throw failure.get();
        }
        long total = Arrays.stream(counts).asLongStream().sum();
        long[] all = new long[(int) total];
        int at = 0;
        for (int t = 0; t < clients; t++) {
            System.arraycopy(latencies.get(t), 0, all, at, counts[t]);
            at += counts[t];
        }
        Arrays.sort(all);
        return new Run("payments API, same request and Idempotency-Key", "java.net.http.HttpClient, " + clients
                + " threads in this JVM (wrk not found)", total, seconds, percentile(all, 0.50) / 1000,
                percentile(all, 0.99) / 1000, wrong.get());
    }

    static long percentile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)];
    }
}
