package dev.idemkit.ports.contract;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.httpkey.ClientId;
import dev.idemkit.ports.in.IdempotentRequests.Reply;
import dev.idemkit.ports.in.IdempotentRequests.Request;
import java.nio.charset.StandardCharsets;

/** Requests and problem checks shared by the Idempotency-Key suites and tests. */
public final class RequestFixtures {
    private RequestFixtures() {}

    public static void assertProblem(Reply reply, int status, String type) {
        assertThat(reply.replayed()).isFalse();
        assertThat(reply.response().status()).isEqualTo(status);
        assertThat(reply.response().headers()).containsEntry("Content-Type", "application/problem+json");
        assertThat(new String(reply.response().body(), StandardCharsets.UTF_8))
                .contains("\"status\":" + status).contains("/problems/" + type);
    }

    public static Request post(ClientId client, String keyHeader, String body) {
        return new Request(client, keyHeader, "POST", "/orders", bytes(body));
    }

    public static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
