package dev.idemkit.app.http;

import static dev.idemkit.app.TestEnvironment.CLIENT_A_KEY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idemkit.app.TestEnvironment;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.config.Sources;
import dev.idemkit.app.wiring.Assembly;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Slow and idle clients against {@code serve}'s HTTP server as it is built there (payments API behind the console's
 * routes), on the real PostgreSQL store: clients that send headers or a body one byte at a time must not take the
 * workers from everybody else, and a request whose headers or body do not arrive in time is answered 408 or dropped.
 * Issue 29 item 6: 140 such connections held every one of the JDK server's 128 threads for 25 s and more.
 */
class SlowClientsIT {
    /** More slow connections than the JDK server had threads (128). */
    private static final int SLOW_BODIES = 150;
    private static final int SLOW_HEADERS = 50;
    /** What another client's request may take while the slow ones trickle. */
    private static final Duration ANSWER_BOUND = Duration.ofSeconds(2);
    /** How long headers or a body may take by default (10 s), plus a margin for the check's period and the machine. */
    private static final Duration DROP_BOUND = max(AppSettings.HttpLimits.defaults().headerTimeout(),
            AppSettings.HttpLimits.defaults().bodyTimeout()).plusSeconds(5);

    private static String schema;
    private static Assembly assembly;
    private static ApiServer api;
    private static URI base;
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(ANSWER_BOUND).build();

    private final List<Socket> slow = new ArrayList<>();
    private final ExecutorService trickle = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "slow-clients");
        t.setDaemon(true);
        return t;
    });

    @BeforeAll
    static void start() throws Exception {
        schema = TestEnvironment.unique("app_it_slow");
        assembly = Assembly.start(AppSettings.resolve(Sources.of(Map.of(), TestEnvironment.settings(schema))));
        api = ApiServer.start(new InetSocketAddress("127.0.0.1", 0), OperatorConsole.routes(
                new OperatorConsole(Map.of(), assembly.redrives(Map.of(), 50), ApiKeys.of(Map.of("op", "op-key-123")),
                        10, assembly.clock()),
                new PaymentsApi(assembly.paymentCharger(), assembly.store().ledger(),
                        ApiKeys.of(assembly.settings().http().apiKeys()), assembly.metrics(),
                        () -> Map.of("store", assembly.store().health()))));
        base = URI.create("http://127.0.0.1:" + api.port());
    }

    @AfterAll
    static void stop() {
        if (api != null) {
            api.close();
        }
        if (assembly != null) {
            assembly.close();
        }
        TestEnvironment.dropSchema(schema);
    }

    @AfterEach
    void closeSlowClients() throws InterruptedException {
        trickle.shutdownNow();
        trickle.awaitTermination(5, TimeUnit.SECONDS);
        for (Socket s : slow) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing what the server may already have dropped
            }
        }
    }

    @Test
    void healthAndAPaymentAnswerWithinTwoSecondsWhileTwoHundredClientsTrickleTheirRequests() throws Exception {
        for (int i = 0; i < SLOW_BODIES; i++) {
            slow.add(open("POST /payments HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 65536\r\n\r\n{"));
        }
        for (int i = 0; i < SLOW_HEADERS; i++) {
            slow.add(open("GET /health HTTP/1.1\r\nHost: x\r\n"));
        }
        trickleOneBytePerSecond(slow, "X-Slow: ", 'a');
        Thread.sleep(1_000); // the server has read every slow request's first bytes

        HttpResponse<String> health = HTTP.send(HttpRequest.newBuilder(base.resolve("/health")).timeout(ANSWER_BOUND)
                .build(), HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> payment = HTTP.send(HttpRequest.newBuilder(base.resolve("/payments"))
                .timeout(ANSWER_BOUND).header("Authorization", "Bearer " + CLIENT_A_KEY)
                .header("Idempotency-Key", UUID.randomUUID().toString()).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(PaymentsApiIT.seedBody("acc-" + UUID.randomUUID(),
                        "1.00"))).build(), HttpResponse.BodyHandlers.ofString());

        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(payment.statusCode()).isEqualTo(201);
    }

    @Test
    void aBodyThatDoesNotArriveInTimeIsAnswered408OrDropped() throws Exception {
        assertAnswered408OrDropped(paymentStart(65536), "", ' ', "a body that trickles");
    }

    @Test
    void headersThatDoNotArriveInTimeAreAnswered408OrDropped() throws Exception {
        assertAnswered408OrDropped("GET /health HTTP/1.1\r\nHost: x\r\n", "X-Slow: ", 'a', "headers that trickle");
    }

    private void assertAnswered408OrDropped(String start, String prefix, char filler, String what) throws Exception {
        Socket s = open(start);
        slow.add(s);
        CompletableFuture<String> answer = CompletableFuture.supplyAsync(() -> firstLineOrEnd(s));
        trickleOneBytePerSecond(slow, prefix, filler);

        await("the server answering 408 or closing " + what).atMost(DROP_BOUND).until(answer::isDone);
        assertThat(answer.get()).matches("HTTP/1.1 408.*|closed");
    }

    /** An authenticated {@code POST /payments} declaring {@code length} bytes of body, of which it sends one. */
    private static String paymentStart(long length) {
        return "POST /payments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + CLIENT_A_KEY + "\r\nIdempotency-Key: "
                + UUID.randomUUID() + "\r\nContent-Type: application/json\r\nContent-Length: " + length + "\r\n\r\n{";
    }

    @Test
    void aBodyLargerThanTheBoundIsRefused413WithoutWaitingForIt() throws Exception {
        Socket declared = open(paymentStart(100L * 1024 * 1024));
        slow.add(declared);
        declared.setSoTimeout((int) ANSWER_BOUND.toMillis());

        assertThat(firstLineOrEnd(declared)).startsWith("HTTP/1.1 413");
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    private static Socket open(String start) throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", api.port()), (int) ANSWER_BOUND.toMillis());
        s.setSoTimeout((int) DROP_BOUND.plusSeconds(10).toMillis());
        s.getOutputStream().write(start.getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        return s;
    }

    /** Each socket gets {@code prefix} once, then {@code filler} once a second, until the test ends or it closes. */
    private void trickleOneBytePerSecond(List<Socket> sockets, String prefix, char filler) {
        List<Socket> mine = List.copyOf(sockets);
        trickle.execute(() -> {
            List<Socket> open = new ArrayList<>(mine);
            for (int tick = 0; tick < 120 && !open.isEmpty() && !Thread.currentThread().isInterrupted(); tick++) {
                byte[] bytes = (tick == 0 && !prefix.isEmpty() ? prefix : String.valueOf(filler))
                        .getBytes(StandardCharsets.US_ASCII);
                open.removeIf(s -> !write(s, bytes));
                try {
                    Thread.sleep(1_000);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
    }

    private static boolean write(Socket s, byte[] bytes) {
        try {
            OutputStream out = s.getOutputStream();
            out.write(bytes);
            out.flush();
            return true;
        } catch (IOException e) {
            return false; // the server closed it
        }
    }

    /** The response's status line, or "closed" when the server closed or reset the connection first. */
    private static String firstLineOrEnd(Socket s) {
        try {
            InputStream in = s.getInputStream();
            StringBuilder line = new StringBuilder();
            for (int c = in.read(); c != -1 && c != '\n'; c = in.read()) {
                line.append((char) c);
            }
            return line.length() == 0 ? "closed" : line.toString().strip();
        } catch (java.net.SocketTimeoutException e) {
            return "no answer within " + DROP_BOUND.plusSeconds(10);
        } catch (IOException e) {
            return "closed";
        }
    }
}
