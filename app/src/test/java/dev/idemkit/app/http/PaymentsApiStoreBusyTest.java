package dev.idemkit.app.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.idemkit.app.json.CanonicalJson;
import dev.idemkit.app.metrics.Metrics;
import dev.idemkit.app.payments.Payment;
import dev.idemkit.app.payments.PaymentLedger;
import dev.idemkit.domain.httpkey.ClientId;
import dev.idemkit.ports.out.StoreBusyException;
import dev.idemkit.ports.out.StoreUnavailableException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * What the payments API tells a client when the store could not take the request: a store that had no free
 * connection within the wait bound (the PostgreSQL claim's {@link StoreBusyException}, proven on the real database by
 * PostgresIdempotencyClaimsIT) is a 503 that says nothing was attempted; any other store failure a 503 that says
 * only that it failed. Both carry Retry-After.
 */
class PaymentsApiStoreBusyTest {
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @Test
    void aBusyStoreIs503SayingNothingWasChargedAndAFailedStoreIs503SayingItFailed() throws Exception {
        assertThat(answerWhenTheStoreThrows(new StoreBusyException("no database connection was free", null)))
                .satisfies(r -> {
                    assertThat(r.statusCode()).isEqualTo(503);
                    assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
                    JsonNode problem = CanonicalJson.MAPPER.readTree(r.body());
                    assertThat(problem.get("type").asText()).endsWith("store-busy");
                    assertThat(problem.get("detail").asText()).contains("nothing was charged")
                            .doesNotContain("database connection was free within"); // the log's words stay in the log
                });
        assertThat(answerWhenTheStoreThrows(new StoreUnavailableException("connection reset", null)))
                .satisfies(r -> {
                    assertThat(r.statusCode()).isEqualTo(503);
                    assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
                    JsonNode problem = CanonicalJson.MAPPER.readTree(r.body());
                    assertThat(problem.get("type").asText()).endsWith("store-unavailable");
                    assertThat(problem.get("detail").asText()).doesNotContain("nothing was charged")
                            .doesNotContain("connection reset");
                });
    }

    private static HttpResponse<byte[]> answerWhenTheStoreThrows(RuntimeException failure) throws Exception {
        PaymentLedger noReads = new PaymentLedger() {
            @Override
            public Payment charge(ClientId client, dev.idemkit.app.payments.PaymentRequest request) {
                throw new AssertionError("never charged");
            }

            @Override
            public Optional<Payment> find(ClientId client, String paymentId) {
                return Optional.empty();
            }

            @Override
            public List<Payment> forAccount(ClientId client, String accountId, int limit) {
                return List.of();
            }
        };
        try (ApiServer api = ApiServer.start(new InetSocketAddress("127.0.0.1", 0), new PaymentsApi((request, payment) -> {
            throw failure;
        }, noReads, ApiKeys.of(Map.of("a", "key-aaaaaaaa")), new Metrics(), Map::of))) {
            return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.port() + "/payments"))
                    .header("Authorization", "Bearer key-aaaaaaaa").header("Idempotency-Key", "k-1")
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
                            "{\"amount\": 1.00, \"currency\": \"BRL\", \"account_id\": \"acc-1\"}", StandardCharsets.UTF_8))
                    .build(), HttpResponse.BodyHandlers.ofByteArray());
        }
    }
}
