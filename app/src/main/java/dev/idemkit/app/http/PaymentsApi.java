package dev.idemkit.app.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.idemkit.app.json.CanonicalJson;
import dev.idemkit.app.metrics.Metrics;
import dev.idemkit.app.payments.Payment;
import dev.idemkit.app.tracing.Tracing;
import dev.idemkit.app.payments.PaymentCharger;
import dev.idemkit.app.payments.PaymentLedger;
import dev.idemkit.app.payments.PaymentRequest;
import dev.idemkit.domain.httpkey.ClientId;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.in.IdempotentRequests;
import dev.idemkit.ports.service.Problems;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP API as one handler for the JDK's HTTP server ({@link ApiServer} serves it): {@code POST /payments}
 * guarded by Idempotency-Key, {@code GET /payments/{id}}, {@code GET /payments?account_id=}, {@code GET /health},
 * {@code GET /metrics}, and {@code GET /idempotency}, the page documenting the Idempotency-Key policy (retention of
 * stored responses, lease, wait, the error answers), which every Idempotency-Key problem links to with
 * {@code Link: </idempotency>; rel="describedby"}, as the IETF draft's error examples do. Every request except health,
 * metrics and that page needs {@code Authorization: Bearer <api key>}; keys and payments are scoped per client. Being a plain {@link HttpHandler}, it can be wrapped (a test's or an exercise's
 * decorator) without the API knowing.
 */
public final class PaymentsApi implements HttpHandler {
    private static final Logger LOG = LoggerFactory.getLogger(PaymentsApi.class);

    /** Where the Idempotency-Key policy is published (the draft: the expiration policy belongs in the documentation). */
    static final String POLICY_PAGE = "/idempotency";
    /** On every Idempotency-Key problem. */
    static final String POLICY_LINK = "<" + POLICY_PAGE + ">; rel=\"describedby\"; type=\"text/html\"";

    /** Bodies bigger than this are refused before they are read whole. */
    static final int MAX_BODY_BYTES = 64 * 1024;
    /** {@code GET /payments?account_id=} lists at most this many. */
    static final int MAX_LISTED = 1000;

    private final PaymentCharger charger;
    private final PaymentLedger ledger;
    private final ApiKeys apiKeys;
    private final Metrics metrics;
    private final Supplier<Map<String, String>> health;
    private final KeyPolicy policy;
    private final Tracing tracing;

    /** Documenting {@link KeyPolicy#defaults()}, the policy the app's charger runs with. */
    public PaymentsApi(PaymentCharger charger, PaymentLedger ledger, ApiKeys apiKeys, Metrics metrics,
            Supplier<Map<String, String>> health) {
        this(charger, ledger, apiKeys, metrics, health, KeyPolicy.defaults());
    }

    /** {@code policy}: the one {@code charger} runs with, published at {@code GET /idempotency}. */
    public PaymentsApi(PaymentCharger charger, PaymentLedger ledger, ApiKeys apiKeys, Metrics metrics,
            Supplier<Map<String, String>> health, KeyPolicy policy) {
        this(charger, ledger, apiKeys, metrics, health, policy, Tracing.none());
    }

    /** With a server span per {@code /payments} request carrying the Idempotency-Key outcome. */
    public PaymentsApi(PaymentCharger charger, PaymentLedger ledger, ApiKeys apiKeys, Metrics metrics,
            Supplier<Map<String, String>> health, KeyPolicy policy, Tracing tracing) {
        this.tracing = tracing;
        this.policy = policy;
        this.charger = charger;
        this.ledger = ledger;
        this.apiKeys = apiKeys;
        this.metrics = metrics;
        this.health = health;
    }

    @Override
    public void handle(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getPath();
        if (path.equals("/health") || path.startsWith("/health/")) {
            health(ex);
        } else if (path.equals("/metrics") || path.startsWith("/metrics/")) {
            metrics(ex);
        } else if (path.equals("/payments") || path.startsWith("/payments/")) {
            payments(ex);
        } else if (path.equals(POLICY_PAGE)) {
            try (ex) {
                send(ex, new StoredResponse(200, Map.of("Content-Type", "text/html; charset=utf-8"),
                        IdempotencyPolicyPage.html(policy).getBytes(StandardCharsets.UTF_8)), false);
            }
        } else {
            try (ex) {
                send(ex, Problems.problem(404, "Not Found", "not-found", "No resource " + path + "."), false);
            }
        }
    }

    private void payments(HttpExchange ex) throws IOException {
        String route = ex.getRequestURI().getPath().equals("/payments") ? "/payments" : "/payments/{id}";
        io.opentelemetry.api.trace.Span span = tracing.server(ex.getRequestMethod(), route, ex.getRequestHeaders());
        try (io.opentelemetry.context.Scope ignored = span.makeCurrent()) {
            paymentsTraced(ex);
        } finally {
            Tracing.status(span, ex.getResponseCode());
            span.end();
        }
    }

    private void outcome(String outcome) {
        metrics.httpOutcome(outcome);
        Tracing.outcome(outcome);
    }

    private void paymentsTraced(HttpExchange ex) throws IOException {
        // the exchange is closed after the answer: a failure is answered inside, before the close (a catch of the
        // try-with-resources itself would run after it and send nothing)
        try (ex) {
            try {
                route(ex);
            } catch (dev.idemkit.ports.out.StoreBusyException e) {
                LOG.warn("request refused: store busy: {}", e.getMessage());
                ex.getResponseHeaders().set("Retry-After", "1");
                send(ex, Problems.problem(503, "Service Unavailable", "store-busy",
                        "No database connection came free within the request's wait bound, so nothing was attempted"
                                + " and nothing was charged; retry it with the same Idempotency-Key."), false);
            } catch (dev.idemkit.ports.out.StoreUnavailableException e) {
                LOG.error("request failed: store unavailable: {}", e.getMessage());
                ex.getResponseHeaders().set("Retry-After", "1");
                send(ex, Problems.problem(503, "Service Unavailable", "store-unavailable",
                        "The store failed while handling the request; retry it with the same Idempotency-Key."),
                        false);
            } catch (RuntimeException e) {
                LOG.error("request failed: {}", e.toString());
                send(ex, Problems.problem(500, "Internal Server Error", "internal", "The request failed; retry it."),
                        false);
            }
        }
    }

    private void route(HttpExchange ex) throws IOException {
        Optional<ClientId> client = apiKeys.authenticate(ex.getRequestHeaders().getFirst("Authorization"));
        if (client.isEmpty()) {
            outcome("unauthorized");
            ex.getResponseHeaders().set("WWW-Authenticate", "Bearer");
            send(ex, Problems.problem(401, "Unauthorized", "unauthorized",
                    "Authorization: Bearer <api key> is missing or unknown."), false);
            return;
        }
        String path = ex.getRequestURI().getPath();
        String method = ex.getRequestMethod();
        if (path.equals("/payments") && method.equals("POST")) {
            create(ex, client.get());
        } else if (path.equals("/payments") && method.equals("GET")) {
            list(ex, client.get());
        } else if (path.startsWith("/payments/") && method.equals("GET")) {
            read(ex, client.get(), path.substring("/payments/".length()));
        } else {
            send(ex, Problems.problem(405, "Method Not Allowed", "method-not-allowed",
                    method + " " + path + " is not supported."), false);
        }
    }

    private void create(HttpExchange ex, ClientId client) throws IOException {
        String contentType = ex.getRequestHeaders().getFirst("Content-Type");
        if (!HttpExchanges.isJson(contentType)) {
            outcome("unsupported_media_type");
            send(ex, Problems.unsupportedMediaType("POST /payments takes application/json, got "
                    + (contentType == null ? "no Content-Type" : dev.idemkit.domain.Printable.text(contentType, 100))), false);
            return;
        }
        byte[] raw = readBody(ex);
        if (raw == null) {
            send(ex, Problems.bodyTooLarge(MAX_BODY_BYTES, "the payments API's fixed limit"), false);
            return;
        }
        JsonNode json;
        PaymentRequest request;
        try {
            json = CanonicalJson.parse(raw);
            request = PaymentRequest.fromJson(json);
        } catch (IllegalArgumentException e) {
            outcome("bad_request");
            send(ex, Problems.problem(400, "Bad Request", "invalid-payment", e.getMessage()), false);
            return;
        }
        // every field line: two of them are a list, which the key parser refuses (400), never the first one alone
        String key = dev.idemkit.domain.httpkey.IdempotencyKey.combineFieldLines(ex.getRequestHeaders().get("Idempotency-Key"));
        IdempotentRequests.Reply reply = charger.charge(new IdempotentRequests.Request(client, key, "POST",
                "/payments", CanonicalJson.canonical(json)), request);
        outcome(reply.replayed() ? "replayed" : outcomeOf(reply.response().status()));
        send(ex, reply.response(), reply.replayed());
    }

    /** {@code GET /payments?account_id=X}: this client's payments to one account, oldest first. */
    private void list(HttpExchange ex, ClientId client) throws IOException {
        Optional<String> account = query(ex.getRequestURI().getRawQuery(), "account_id");
        if (account.isEmpty() || !dev.idemkit.domain.KeyRules.isValid(account.get())) {
            send(ex, Problems.problem(400, "Bad Request", "invalid-query",
                    "GET /payments needs ?account_id= (1..255 visible ASCII characters)."), false);
            return;
        }
        var node = CanonicalJson.MAPPER.createObjectNode();
        var items = node.putArray("payments");
        for (Payment p : ledger.forAccount(client, account.get(), MAX_LISTED)) {
            items.add(CanonicalJson.parse(p.toJson()));
        }
        send(ex, new StoredResponse(200, Map.of("Content-Type", "application/json"), CanonicalJson.canonical(node)),
                false);
    }

    private static Optional<String> query(String rawQuery, String name) {
        try {
            return Optional.ofNullable(HttpExchanges.query(rawQuery).get(name));
        } catch (IllegalArgumentException e) {
            return Optional.empty(); // a malformed escape: as if absent
        }
    }

    private void read(HttpExchange ex, ClientId client, String id) throws IOException {
        Optional<Payment> p = ledger.find(client, id);
        if (p.isEmpty()) {
            send(ex, Problems.problem(404, "Not Found", "payment-not-found", "No payment " + id + " for this client."),
                    false);
            return;
        }
        send(ex, new StoredResponse(200, Map.of("Content-Type", "application/json"), p.get().toJson()), false);
    }

    private void health(HttpExchange ex) throws IOException {
        try (ex) {
            Map<String, String> checks = health.get();
            boolean up = checks.values().stream().allMatch("UP"::equals);
            var node = CanonicalJson.MAPPER.createObjectNode();
            node.put("status", up ? "UP" : "DOWN");
            checks.forEach(node.putObject("checks")::put);
            send(ex, new StoredResponse(up ? 200 : 503, Map.of("Content-Type", "application/json"),
                    CanonicalJson.canonical(node)), false);
        }
    }

    private void metrics(HttpExchange ex) throws IOException {
        try (ex) {
            send(ex, new StoredResponse(200, Map.of("Content-Type", "text/plain; version=0.0.4; charset=utf-8"),
                    metrics.scrape().getBytes(StandardCharsets.UTF_8)), false);
        }
    }

    private static String outcomeOf(int status) {
        return switch (status) {
            case 400 -> "bad_request";
            case 409 -> "conflict";
            case 422 -> "mismatch";
            default -> status < 300 ? "executed" : "status_" + status;
        };
    }

    /** The body, or null when it is larger than {@link #MAX_BODY_BYTES}. */
    private static byte[] readBody(HttpExchange ex) throws IOException {
        return HttpExchanges.body(ex, MAX_BODY_BYTES);
    }

    private static void send(HttpExchange ex, StoredResponse response, boolean replayed) throws IOException {
        response.headers().forEach((k, v) -> ex.getResponseHeaders().set(k, v));
        if (Problems.isKeyProblem(response)) {
            ex.getResponseHeaders().set("Link", POLICY_LINK);
        }
        if (replayed) {
            ex.getResponseHeaders().set("Idempotent-Replayed", "true");
        }
        HttpExchanges.write(ex, response.status(), response.body());
    }
}
