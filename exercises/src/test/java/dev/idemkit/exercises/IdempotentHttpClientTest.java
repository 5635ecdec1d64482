package dev.idemkit.exercises;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.idemkit.domain.httpkey.IdempotencyKey;
import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.Jitter;
import dev.idemkit.domain.retry.RandomSource;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The idempotent HTTP client against a tiny real HTTP server that answers from a script: the key is made
 * once, before the first attempt, and every retry sends the same one; a POST without a key is never
 * retried; idempotent methods are retried as they are.
 */
class IdempotentHttpClientTest {
    /**
     * Each attempt's bound: far above what a local answer takes even on a loaded 2-core machine (at 300 ms a full-tier
     * run timed out ordinary attempts, which then took the next step of the script: 4 requests seen instead of 5).
     */
    private static final Duration ATTEMPT_TIMEOUT = Duration.ofSeconds(2);

    /** What the server does with one request. */
    private sealed interface Step {
        record Answer(int status) implements Step {}

        record Slow(Duration delay) implements Step {}

        record Drop() implements Step {}
    }

    /** One request as the server saw it. */
    private record Seen(String method, String idempotencyKey, String body) {}

    private HttpServer server;
    private final ConcurrentLinkedQueue<Step> script = new ConcurrentLinkedQueue<>();
    private final List<Seen> seen = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger keysMade = new AtomicInteger();
    private IdempotentHttpClient client;
    private URI uri;

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 50);
        server.setExecutor(Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "script-server");
            t.setDaemon(true);
            return t;
        }));
        server.createContext("/", this::answer);
        server.start();
        uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/payments");
        client = new IdempotentHttpClient(HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build(),
                new IdempotentHttpClient.Settings(5, Backoff.exponential(Duration.ofMillis(1), Duration.ofMillis(5),
                        Jitter.FULL), ATTEMPT_TIMEOUT), RandomSource.fixed(0.5),
                () -> "key-" + keysMade.incrementAndGet());
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private void answer(HttpExchange ex) throws IOException {
        try (ex) {
            byte[] body = ex.getRequestBody().readAllBytes();
            seen.add(new Seen(ex.getRequestMethod(), ex.getRequestHeaders().getFirst("Idempotency-Key"),
                    new String(body, StandardCharsets.UTF_8)));
            Step step = script.poll();
            if (step == null) {
                step = new Step.Answer(200);
            }
            if (step instanceof Step.Drop) {
                return; // closes the exchange without any response
            }
            if (step instanceof Step.Slow slow) {
                try {
                    Thread.sleep(slow.delay().toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                step = new Step.Answer(201);
            }
            byte[] reply = ("{\"attempt\":" + seen.size() + "}").getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(((Step.Answer) step).status(), reply.length);
            ex.getResponseBody().write(reply);
        }
    }

    private void willDo(Step... steps) {
        script.addAll(List.of(steps));
    }

    @Test
    void aPostGetsOneKeyBeforeTheFirstAttemptAndReusesItAfter500And409() throws Exception {
        willDo(new Step.Answer(500), new Step.Answer(409), new Step.Answer(503), new Step.Answer(201));

        IdempotentHttpClient.Result r = client.send("POST", uri, body(), Map.of("Content-Type", "application/json"));

        assertThat(r.response().statusCode()).isEqualTo(201);
        assertThat(r.attempts()).isEqualTo(4);
        assertThat(keysMade).as("keys generated").hasValue(1);
        assertThat(r.key()).hasValue(new IdempotencyKey("key-1"));
        assertThat(seen).hasSize(4).allSatisfy(s -> {
            assertThat(s.idempotencyKey()).isEqualTo("key-1");
            assertThat(s.body()).isEqualTo(new String(body(), StandardCharsets.UTF_8));
        });
        assertThat(client.retries()).isEqualTo(3);
    }

    @Test
    void aTimedOutOrDroppedAttemptIsRetriedWithTheSameKey() throws Exception {
        willDo(new Step.Slow(ATTEMPT_TIMEOUT.multipliedBy(2)), new Step.Drop(), new Step.Answer(201));

        IdempotentHttpClient.Result r = client.send("POST", uri, body(), Map.of());

        assertThat(r.response().statusCode()).isEqualTo(201);
        assertThat(r.attempts()).isEqualTo(3);
        assertThat(seen).extracting(Seen::idempotencyKey).containsExactly("key-1", "key-1", "key-1");
        assertThat(keysMade).hasValue(1);
    }

    @Test
    void eachNewRequestGetsItsOwnKey() throws Exception {
        client.send("POST", uri, body(), Map.of());
        client.send("PATCH", uri, body(), Map.of());

        assertThat(seen).extracting(Seen::idempotencyKey).containsExactly("key-1", "key-2");
    }

    @Test
    void aPostWithoutAKeyIsSentExactlyOnceEvenWhenItFails() throws Exception {
        willDo(new Step.Answer(500), new Step.Answer(201));

        IdempotentHttpClient.Result r = client.send("POST", uri, body(), Map.of(), Optional.empty());

        assertThat(r.response().statusCode()).isEqualTo(500);
        assertThat(r.attempts()).isEqualTo(1);
        assertThat(seen).hasSize(1);
        assertThat(seen.get(0).idempotencyKey()).isNull();
        assertThat(client.retries()).isZero();
    }

    @Test
    void aPostWithoutAKeyWhoseResponseIsDroppedFailsInsteadOfRetrying() {
        willDo(new Step.Drop(), new Step.Answer(201));

        assertThatThrownBy(() -> client.send("POST", uri, body(), Map.of(), Optional.empty()))
                .isInstanceOf(IOException.class);
        assertThat(seen).hasSize(1);
    }

    @Test
    void aGetIsRetriedAsItIsWithoutAKey() throws Exception {
        // no dropped response here: the JDK's own client may itself resend a GET on a reused connection
        willDo(new Step.Answer(503), new Step.Answer(500), new Step.Answer(200));

        IdempotentHttpClient.Result r = client.send("GET", uri, new byte[0], Map.of());

        assertThat(r.response().statusCode()).isEqualTo(200);
        assertThat(r.attempts()).isEqualTo(3);
        assertThat(r.key()).isEmpty();
        assertThat(keysMade).as("no key for an idempotent method").hasValue(0);
        assertThat(seen).extracting(Seen::method).containsOnly("GET");
        assertThat(seen).extracting(Seen::idempotencyKey).containsOnlyNulls();
    }

    @Test
    void aClientErrorOtherThan409IsNotRetried() throws Exception {
        willDo(new Step.Answer(422), new Step.Answer(201));

        IdempotentHttpClient.Result r = client.send("POST", uri, body(), Map.of());

        assertThat(r.response().statusCode()).isEqualTo(422);
        assertThat(seen).hasSize(1);
    }

    @Test
    void afterTheLastAttemptTheLastAnswerIsReturned() throws Exception {
        for (int i = 0; i < 5; i++) {
            willDo(new Step.Answer(500));
        }
        willDo(new Step.Answer(201));

        IdempotentHttpClient.Result r = client.send("POST", uri, body(), Map.of());

        assertThat(r.response().statusCode()).isEqualTo(500);
        assertThat(r.attempts()).isEqualTo(5);
        assertThat(seen).hasSize(5).extracting(Seen::idempotencyKey).containsOnly("key-1");
    }

    @Test
    void whenEveryAttemptIsDroppedTheLastFailureIsThrownAfterAllAttemptsWithOneKey() {
        for (int i = 0; i < 5; i++) {
            willDo(new Step.Drop());
        }

        assertThatThrownBy(() -> client.send("POST", uri, body(), Map.of())).isInstanceOf(IOException.class);
        assertThat(seen).hasSize(5).extracting(Seen::idempotencyKey).containsOnly("key-1");
    }

    private static byte[] body() {
        return "{\"amount\": 150.00, \"currency\": \"BRL\", \"account_id\": \"acc-123\"}".getBytes(StandardCharsets.UTF_8);
    }
}
