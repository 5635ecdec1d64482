package dev.idemkit.app.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.idemkit.app.json.CanonicalJson;
import dev.idemkit.app.metrics.Metrics;
import dev.idemkit.app.payments.Payment;
import dev.idemkit.app.payments.PaymentCharger;
import dev.idemkit.app.payments.PaymentLedger;
import dev.idemkit.app.payments.PaymentRequest;
import dev.idemkit.domain.httpkey.ClientId;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.in.IdempotentRequests;
import dev.idemkit.ports.service.Problems;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP API on the JDK's HTTP server: {@code POST /payments} guarded by Idempotency-Key,
 * {@code GET /payments/{id}}, {@code GET /health}, {@code GET /metrics}. Every request except health
 * and metrics needs {@code Authorization: Bearer <api key>}; keys and payments are scoped per client.
 */
public final class PaymentsApi implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PaymentsApi.class);
    static {
        // The JDK server leaves Nagle's algorithm on by default: with delayed ACKs every small response then
        // waits ~40 ms. Read once, when the server classes load, so it is set before the first server starts.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
    }

    /** Bodies bigger than this are refused before they are read whole. */
    static final int MAX_BODY_BYTES = 64 * 1024;

    private final HttpServer server;
    private final ExecutorService executor;
    private final PaymentCharger charger;
    private final PaymentLedger ledger;
    private final ApiKeys apiKeys;
    private final Metrics metrics;
    private final Supplier<Map<String, String>> health;
    private final Faults faults;

    /**
     * Binds the server (port 0 picks a free port).
     *
     * @throws IOException when the address is in use or cannot be bound
     */
    public PaymentsApi(InetSocketAddress address, PaymentCharger charger, PaymentLedger ledger, ApiKeys apiKeys,
            Metrics metrics, Supplier<Map<String, String>> health) throws IOException {
        this(address, charger, ledger, apiKeys, metrics, health, Faults.NONE);
    }

    /** As above, with injected faults (exercise 2 and tests only). */
    public PaymentsApi(InetSocketAddress address, PaymentCharger charger, PaymentLedger ledger, ApiKeys apiKeys,
            Metrics metrics, Supplier<Map<String, String>> health, Faults faults) throws IOException {
        this.faults = faults;
        this.charger = charger;
        this.ledger = ledger;
        this.apiKeys = apiKeys;
        this.metrics = metrics;
        this.health = health;
        this.server = HttpServer.create(address, 512);
        this.executor = Executors.newFixedThreadPool(128, r -> {
            Thread t = new Thread(r, "idemkit-http");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/payments", this::payments);
        server.createContext("/health", this::health);
        server.createContext("/metrics", this::metrics);
        server.start();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private void payments(HttpExchange ex) throws IOException {
        try (ex) {
            Optional<ClientId> client = apiKeys.authenticate(ex.getRequestHeaders().getFirst("Authorization"));
            if (client.isEmpty()) {
                metrics.httpOutcome("unauthorized");
                send(ex, Problems.problem(401, "Unauthorized", "unauthorized",
                        "Authorization: Bearer <api key> is missing or unknown."), false);
                return;
            }
            String path = ex.getRequestURI().getPath();
            String method = ex.getRequestMethod();
            if (path.equals("/payments") && method.equals("POST")) {
                create(ex, client.get());
            } else if (path.startsWith("/payments/") && method.equals("GET")) {
                read(ex, client.get(), path.substring("/payments/".length()));
            } else {
                send(ex, Problems.problem(405, "Method Not Allowed", "method-not-allowed",
                        method + " " + path + " is not supported."), false);
            }
        } catch (dev.idemkit.ports.out.StoreUnavailableException e) {
            LOG.error("request failed: store unavailable: {}", e.getMessage());
            ex.getResponseHeaders().set("Retry-After", "1");
            send(ex, Problems.problem(503, "Service Unavailable", "store-unavailable",
                    "The store failed while handling the request; retry it with the same Idempotency-Key."), false);
        } catch (RuntimeException e) {
            LOG.error("request failed: {}", e.toString());
            send(ex, Problems.problem(500, "Internal Server Error", "internal", "The request failed; retry it."),
                    false);
        }
    }

    private void create(HttpExchange ex, ClientId client) throws IOException {
        byte[] raw = readBody(ex);
        if (raw == null) {
            send(ex, Problems.problem(413, "Content Too Large", "body-too-large",
                    "The body exceeds " + MAX_BODY_BYTES + " bytes."), false);
            return;
        }
        JsonNode json;
        PaymentRequest request;
        try {
            json = CanonicalJson.parse(raw);
            request = PaymentRequest.fromJson(json);
        } catch (IllegalArgumentException e) {
            metrics.httpOutcome("bad_request");
            send(ex, Problems.problem(400, "Bad Request", "invalid-payment", e.getMessage()), false);
            return;
        }
        String key = ex.getRequestHeaders().getFirst("Idempotency-Key");
        IdempotentRequests.Reply reply = charger.charge(new IdempotentRequests.Request(client, key, "POST",
                "/payments", CanonicalJson.canonical(json)), request,
                () -> inject(faults.at(key, Faults.Stage.BEFORE_CHARGE)));
        metrics.httpOutcome(reply.replayed() ? "replayed" : outcomeOf(reply.response().status()));
        if (inject(faults.at(key, Faults.Stage.AFTER_CHARGE))) {
            return; // dropped: the exchange closes with no response
        }
        send(ex, reply.response(), reply.replayed());
    }

    /** Applies a fault; true when the response must be dropped. */
    private static boolean inject(Faults.Fault fault) {
        if (fault instanceof Faults.Fault.Delay d) {
            try {
                Thread.sleep(d.duration().toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return fault instanceof Faults.Fault.Drop;
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
        try (InputStream in = ex.getRequestBody()) {
            byte[] body = in.readNBytes(MAX_BODY_BYTES + 1);
            return body.length > MAX_BODY_BYTES ? null : body;
        }
    }

    private static void send(HttpExchange ex, StoredResponse response, boolean replayed) throws IOException {
        response.headers().forEach((k, v) -> ex.getResponseHeaders().set(k, v));
        if (replayed) {
            ex.getResponseHeaders().set("Idempotent-Replayed", "true");
        }
        byte[] body = response.body();
        ex.sendResponseHeaders(response.status(), body.length == 0 ? -1 : body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
    }

    @Override
    public void close() {
        server.stop(1);
        executor.shutdown();
        try {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
