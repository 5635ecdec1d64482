package dev.idemkit.app.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.app.TestEnvironment;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.config.Sources;
import dev.idemkit.app.http.ApiKeys;
import dev.idemkit.app.http.ApiServer;
import dev.idemkit.app.http.OperatorConsole;
import dev.idemkit.app.json.CanonicalJson;
import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.domain.retry.NonRetryableException;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * One message's whole life as one trace, seen by the SDK's in-memory exporter, on the real RabbitMQ and PostgreSQL:
 * published, failed (retried), failed for good (dead-lettered), redriven through the console's API with an approval,
 * processed.
 */
class MessageLifeTraceIT {

    /** Batched consumption (serve's default): each delivery's span ends when its batch commits, with its decision. */
    @Test
    void batchedDeliveriesEndTheirSpansWithTheirDecisionInTheirPublishersTrace() throws Exception {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        OpenTelemetrySdk sdk = inMemory(exporter);
        String schema = TestEnvironment.unique("app_it_trace_batch");
        String queue = TestEnvironment.unique("app-it-trace-batch");
        String account = "acc-trace-" + UUID.randomUUID();
        try (Assembly assembly = Assembly.start(AppSettings.resolve(Sources.of(Map.of(), TestEnvironment.settings(
                schema))), new Tracing(sdk))) {
            Tracing tracing = assembly.tracing();
            dev.idemkit.ports.service.BatchingConsumer<?> batching = assembly.batchedConsumer("trace-batch",
                    dev.idemkit.app.wiring.ConsumerKind.CREDIT_ACCOUNT,
                    dev.idemkit.ports.service.BatchingConsumer.BatchSettings.defaults().withMaxBatch(10));
            Subscription s = assembly.transport().subscribe(queue, batching);
            try {
                byte[] credit = ("{\"account_id\":\"" + account + "\",\"amount\":1.00}").getBytes(StandardCharsets.UTF_8);
                for (String id : List.of("c-1", "c-2", "c-3", "c-1")) {
                    tracing.publishing(assembly.transport()).publish(queue, OutgoingMessage.of(id, credit));
                }
                Awaitility.await("four decisions").atMost(Duration.ofSeconds(30)).until(() -> exporter
                        .getFinishedSpanItems().stream().filter(d -> d.getAttributes().get(Tracing.DECISION) != null)
                        .count() == 4);
            } finally {
                batching.close();
                s.close();
                ((dev.idemkit.adapters.rabbit.RabbitMessageTransport) assembly.transport()).deleteTopology(queue);
            }
        } finally {
            TestEnvironment.dropSchema(schema);
        }
        List<SpanData> spans = exporter.getFinishedSpanItems();
        sdk.close();
        List<SpanData> consumed = spans.stream().filter(d -> d.getName().startsWith("process ")).toList();
        assertThat(consumed).extracting(d -> d.getAttributes().get(Tracing.DECISION))
                .containsExactlyInAnyOrder("processed", "processed", "processed", "duplicate");
        for (SpanData c : consumed) {
            SpanData publish = spans.stream().filter(d -> d.getSpanId().equals(c.getParentSpanId())).findFirst()
                    .orElseThrow(() -> new AssertionError("no parent for " + c));
            assertThat(publish.getName()).isEqualTo("publish " + queue);
            assertThat(publish.getTraceId()).isEqualTo(c.getTraceId());
            assertThat(publish.getAttributes().get(Tracing.MESSAGE_ID))
                    .isEqualTo(c.getAttributes().get(Tracing.MESSAGE_ID));
        }
    }

    @Test
    void aRetriedThenDeadLetteredThenRedrivenMessageIsOneTraceWithItsSpansInOrder() throws Exception {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        OpenTelemetrySdk sdk = inMemory(exporter);
        String schema = TestEnvironment.unique("app_it_trace");
        String queue = TestEnvironment.unique("app-it-trace");
        String consumerName = "trace-it-" + UUID.randomUUID().toString().substring(0, 8);
        String operatorKey = "operator-" + UUID.randomUUID();
        AtomicInteger calls = new AtomicInteger();
        try (Assembly assembly = Assembly.start(AppSettings.resolve(Sources.of(Map.of(), TestEnvironment.settings(
                schema, "IDEMKIT_BACKOFF_BASE", "200ms", "IDEMKIT_BACKOFF_CAP", "500ms"))), new Tracing(sdk))) {
            Tracing tracing = assembly.tracing();
            Subscription s = assembly.transport().subscribe(queue, (assembly.consumer(
                    assembly.store(), consumerName, (message, work) -> {
                        int call = calls.incrementAndGet();
                        if (call == 1) {
                            throw new IllegalStateException("provider timed out"); // retryable
                        }
                        if (call == 2) {
                            throw new NonRetryableException("provider refused the account");
                        }
                    })));
            Map<String, dev.idemkit.ports.in.DeadLetters> queues = Map.of(queue, assembly.deadLetters(consumerName,
                    a -> { }));
            OperatorConsole console = new OperatorConsole(queues, new dev.idemkit.ports.service.RedriveService(queues,
                    dev.idemkit.ports.out.RedriveAudit.inMemory(10), assembly.clock(), 100, tracing.redriveEvents()),
                    ApiKeys.of(Map.of("ana", operatorKey)), 10, assembly.clock());
            try (console; ApiServer api = ApiServer.start(new InetSocketAddress("127.0.0.1", 0),
                    OperatorConsole.routes(console, ex -> ex.sendResponseHeaders(404, -1)))) {
                tracing.publishing(assembly.transport()).publish(queue,
                        OutgoingMessage.of("order-1", "{}".getBytes(StandardCharsets.UTF_8)));
                Awaitility.await("dead-lettered").atMost(Duration.ofSeconds(30))
                        .until(() -> assembly.deadLetterQueue().depth(queue) == 1);
                String deadLetterId = assembly.deadLetterQueue().peek(queue, 1).get(0).id();

                HttpResponse<String> redrive = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + api.port() + "/ops/redrive"))
                        .header("Authorization", "Bearer " + operatorKey)
                        .POST(HttpRequest.BodyPublishers.ofByteArray(CanonicalJson.MAPPER.writeValueAsBytes(Map.of(
                                "queue", queue, "ids", List.of(deadLetterId), "approver", "ana", "reason",
                                "provider fixed")))).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(redrive.statusCode()).as(redrive.body()).isEqualTo(202); // a job, on the console's thread
                Awaitility.await("processed after the redrive").atMost(Duration.ofSeconds(30)).until(() -> exporter
                        .getFinishedSpanItems().stream().anyMatch(d -> "processed".equals(d.getAttributes()
                                .get(Tracing.DECISION))));
            } finally {
                s.close();
                ((dev.idemkit.adapters.rabbit.RabbitMessageTransport) assembly.transport()).deleteTopology(queue);
            }
        } finally {
            TestEnvironment.dropSchema(schema);
        }
        List<SpanData> spans = exporter.getFinishedSpanItems().stream()
                .sorted(Comparator.comparingLong(SpanData::getStartEpochNanos)).toList();
        sdk.close(); // (its exporter forgets what it kept)
        spans.forEach(d -> System.out.printf("TRACE %s span=%s parent=%s %-40s kind=%s %s%n", d.getTraceId(),
                d.getSpanId(), d.getParentSpanId(), d.getName(), d.getKind(), d.getAttributes()));
        assertThat(spans).extracting(SpanData::getTraceId).as("one trace").containsOnly(spans.get(0).getTraceId());
        assertThat(spans).extracting(SpanData::getName).containsExactly("publish " + queue, "process " + queue,
                "process " + queue, "redrive " + queue, "process " + queue);
        assertThat(spans).extracting(d -> d.getAttributes().get(Tracing.DECISION))
                .containsExactly(null, "retried", "dead_lettered", null, "processed");
        assertThat(spans.get(1).getAttributes().get(Tracing.ATTEMPT)).isEqualTo(1L);
        assertThat(spans.get(2).getAttributes().get(Tracing.ATTEMPT)).isEqualTo(2L);
        assertThat(spans.get(1).getAttributes().get(Tracing.CONSUMER)).isEqualTo(consumerName);
        assertThat(spans.get(3).getAttributes().get(Tracing.APPROVED_BY)).isEqualTo("ana");
        assertThat(spans.get(3).getAttributes().get(Tracing.REDRIVE_ACTION)).isEqualTo("REPUBLISH");
        assertThat(spans.get(4).getAttributes().get(Tracing.STORE_MS)).isPositive();
        assertThat(spans.subList(1, 5)).allSatisfy(d -> assertThat(d.getParentSpanId())
                .as("a child of the publish").isEqualTo(spans.get(0).getSpanId()));
    }

    /** The payments API: a server span per request, a child of the client's traceparent, with the key's outcome. */
    @Test
    void paymentRequestsAreServerSpansCarryingTheIdempotencyKeyOutcome() throws Exception {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        OpenTelemetrySdk sdk = inMemory(exporter);
        String schema = TestEnvironment.unique("app_it_trace_http");
        String clientTrace = "0af7651916cd43dd8448eb211c80319c";
        try (Assembly assembly = Assembly.start(AppSettings.resolve(Sources.of(Map.of(), TestEnvironment.settings(
                schema))), new Tracing(sdk));
                ApiServer api = ApiServer.start(new InetSocketAddress("127.0.0.1", 0), new dev.idemkit.app.http
                        .PaymentsApi(assembly.paymentCharger(), assembly.store().ledger(), ApiKeys.of(Map.of("a",
                                TestEnvironment.CLIENT_A_KEY)), assembly.metrics(), Map::of,
                                dev.idemkit.domain.httpkey.KeyPolicy.defaults(), assembly.tracing()))) {
            String key = UUID.randomUUID().toString();
            String account = "acc-trace-" + UUID.randomUUID();
            for (String[] call : new String[][] {{"150.00", "00-" + clientTrace + "-b7ad6b7169203331-01"},
                    {"150.00", "not a traceparent"}, {"151.00", null}}) {
                HttpRequest.Builder r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.port()
                        + "/payments")).header("Authorization", "Bearer " + TestEnvironment.CLIENT_A_KEY)
                        .header("Idempotency-Key", key).header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
                                "{\"amount\": " + call[0] + ", \"currency\": \"BRL\", \"account_id\": \""
                                        + account + "\"}"));
                if (call[1] != null) {
                    r.header("traceparent", call[1]);
                }
                HttpClient.newHttpClient().send(r.build(), HttpResponse.BodyHandlers.discarding());
            }
            // the payments.created event appended in the request's transaction carries the request's trace
            try (java.sql.Connection c = TestEnvironment.connect(); java.sql.PreparedStatement ps = c.prepareStatement(
                    "SELECT headers->>'traceparent' FROM " + schema + ".outbox_messages WHERE headers->>'payment_id'"
                            + " IS NOT NULL"); java.sql.ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("one payments.created").isTrue();
                assertThat(rs.getString(1)).startsWith("00-" + clientTrace + "-");
                assertThat(rs.next()).isFalse();
            }
        } finally {
            TestEnvironment.dropSchema(schema);
        }
        List<SpanData> spans = exporter.getFinishedSpanItems().stream().filter(d -> d.getName().equals(
                "POST /payments")).sorted(Comparator.comparingLong(SpanData::getStartEpochNanos)).toList();
        sdk.close();
        assertThat(spans).extracting(d -> d.getAttributes().get(Tracing.KEY_OUTCOME))
                .containsExactly("executed", "replayed", "mismatch");
        assertThat(spans).extracting(d -> d.getAttributes().get(Tracing.HTTP_STATUS)).containsExactly(201L, 201L, 422L);
        assertThat(spans.get(0).getTraceId()).as("the client's trace").isEqualTo(clientTrace);
        assertThat(spans.get(1).getTraceId()).as("a malformed traceparent starts a new trace").isNotEqualTo(clientTrace);
    }

    /** The SDK exporting to {@code exporter} as each span ends, with W3C propagation. */
    private static OpenTelemetrySdk inMemory(InMemorySpanExporter exporter) {
        return OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter))
                        .build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
    }
}
