package dev.idemkit.exercises;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The decorator runs the handler in full, then answers normally, too late, or not at all, by key. */
class FlakyResponsesTest {
    private final AtomicInteger handled = new AtomicInteger();
    private final HttpHandler api = ex -> {
        handled.incrementAndGet();
        byte[] body = "charged".getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Location", "/payments/1");
        ex.sendResponseHeaders(201, body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
        ex.close();
    };
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private HttpResponse<String> post(URI uri, String key, Duration timeout) throws Exception {
        return http.send(HttpRequest.newBuilder(uri).timeout(timeout).header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void firstAnswersPerKeyGoThroughThenLateThenNowhereAndTheHandlerAlwaysRuns() throws Exception {
        FlakyResponses flaky = new FlakyResponses("chaos-", 1);
        try (LocalServer server = LocalServer.start(flaky.around(api))) {
            URI uri = server.uri().resolve("/payments");

            HttpResponse<String> first = post(uri, "chaos-a", Duration.ofSeconds(10));
            assertThat(first.statusCode()).isEqualTo(201);
            assertThat(first.body()).isEqualTo("charged");

            assertThatThrownBy(() -> post(uri, "chaos-b", Duration.ofMillis(300)))
                    .as("held back past the client's timeout").isInstanceOf(HttpTimeoutException.class);
            assertThatThrownBy(() -> post(uri, "chaos-c", Duration.ofSeconds(10)))
                    .as("the connection closes with no answer").isInstanceOf(IOException.class)
                    .isNotInstanceOf(HttpTimeoutException.class);

            HttpResponse<String> late = post(uri, "chaos-d", Duration.ofSeconds(10)); // turn 3: through again
            assertThat(late.statusCode()).isEqualTo(201);
            assertThat(late.headers().firstValue("Location")).hasValue("/payments/1");
        }
        assertThat(handled.get()).as("every request reached the handler").isEqualTo(4);
        assertThat(flaky.delayed()).isEqualTo(1);
        assertThat(flaky.dropped()).isEqualTo(1);
    }

    @Test
    void aDelayedAnswerArrivesWholeForAPatientClient() throws Exception {
        FlakyResponses flaky = new FlakyResponses("chaos-", 1);
        try (LocalServer server = LocalServer.start(flaky.around(api))) {
            URI uri = server.uri().resolve("/payments");
            post(uri, "chaos-a", Duration.ofSeconds(10));

            HttpResponse<String> delayed = post(uri, "chaos-b", Duration.ofSeconds(10));

            assertThat(delayed.statusCode()).isEqualTo(201);
            assertThat(delayed.body()).isEqualTo("charged");
            assertThat(flaky.delayed()).isEqualTo(1);
        }
    }

    @Test
    void requestsWithoutThePrefixAreNeverTouched() throws Exception {
        FlakyResponses flaky = new FlakyResponses("chaos-", 1);
        try (LocalServer server = LocalServer.start(flaky.around(api))) {
            URI uri = server.uri().resolve("/payments");
            for (int i = 0; i < 20; i++) {
                assertThat(post(uri, "plain-" + i, Duration.ofSeconds(10)).statusCode()).isEqualTo(201);
                assertThat(post(uri, "plain-" + i, Duration.ofSeconds(10)).statusCode()).isEqualTo(201);
            }
        }
        assertThat(flaky.delayed() + flaky.dropped()).isZero();
    }

    @Test
    void slowChargesSlowTheFirstChargeOfEveryThirdPrefixedAccountOnly() {
        SlowCharges slow = new SlowCharges("acc-chaos-");
        for (int i = 0; i < 6; i++) {
            assertThat(slow.around("acc-chaos-" + i, () -> "charged")).isEqualTo("charged");
            slow.around("acc-chaos-" + i, () -> "again");
            slow.around("acc-plain-" + i, () -> "plain");
        }
        assertThat(slow.slowed()).isEqualTo(2);
    }
}
