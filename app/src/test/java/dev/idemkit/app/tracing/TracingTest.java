package dev.idemkit.app.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The publishing side without a broker: which parent a publish span takes, and what the message then carries. */
class TracingTest {
    private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
    private final OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
            .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
    private final List<OutgoingMessage> sent = new ArrayList<>();
    private final MessageTransport capture = new MessageTransport() {
        @Override
        public Subscription subscribe(String queue, DeliveryHandler handler) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void publish(String queue, OutgoingMessage message) {
            sent.add(message);
        }

        @Override
        public void close() {
        }
    };

    @Test
    void anOutboxEventCarryingItsTransactionsTraceIsPublishedAsAChildOfIt() {
        String trace = "4bf92f3577b34da6a3ce929d0e0e4736";
        OutgoingMessage event = OutgoingMessage.of("evt-1", "{}".getBytes(StandardCharsets.UTF_8))
                .withHeaders(Map.of("traceparent", "00-" + trace + "-00f067aa0ba902b7-01", "payment_id", "p-1"));

        new Tracing(sdk).publishing(capture).publish("payments.created", event);

        SpanData publish = exporter.getFinishedSpanItems().get(0);
        assertThat(publish.getTraceId()).isEqualTo(trace);
        assertThat(publish.getParentSpanId()).isEqualTo("00f067aa0ba902b7");
        assertThat(sent.get(0).headers()).containsEntry("payment_id", "p-1")
                .containsEntry("traceparent", "00-" + trace + "-" + publish.getSpanId() + "-01");
    }

    @Test
    void aPublishWithoutAnyTraceStartsOneAndAMalformedTraceparentIsReplaced() {
        OutgoingMessage hostile = OutgoingMessage.of("m-1", new byte[0])
                .withHeaders(Map.of("traceparent", "00-zzzz-not-hex-01"));

        new Tracing(sdk).publishing(capture).publish("q", hostile);

        SpanData publish = exporter.getFinishedSpanItems().get(0);
        assertThat(publish.getParentSpanContext().isValid()).isFalse();
        assertThat(sent.get(0).headers().get("traceparent")).startsWith("00-" + publish.getTraceId() + "-"
                + publish.getSpanId() + "-");
    }

    /**
     * serve's outbox relay publishes through this decorator. Before, it had no publishAsync of its own, so the interface's
     * default published on the caller's thread and waited for each confirm: the relay pipelined nothing in serve.
     */
    @Test
    void aPipelinedPublishStaysPipelinedAndItsSpanEndsWithItsConfirm() throws InterruptedException {
        dev.idemkit.ports.memory.PendingConfirmsTransport pipelined = new dev.idemkit.ports.memory.PendingConfirmsTransport();
        pipelined.health("DOWN: test");
        MessageTransport traced = new Tracing(sdk).publishing(pipelined);

        var first = traced.publishAsync("q", OutgoingMessage.of("m-1", new byte[0]));
        var second = traced.publishAsync("q", OutgoingMessage.of("m-2", new byte[0]));

        assertThat(first).as("returned before its confirm").isNotDone();
        assertThat(second).isNotDone();
        assertThat(exporter.getFinishedSpanItems()).as("the spans end with their confirms").isEmpty();
        var written = List.of(pipelined.next(), pipelined.next());
        assertThat(written.get(0).message().headers().get("traceparent")).as("the message carries its publish span")
                .isNotNull();
        written.get(0).confirm().complete(null);
        written.get(1).confirm().completeExceptionally(new IllegalStateException("nacked"));
        assertThat(first).isCompleted();
        assertThat(second).isCompletedExceptionally();
        assertThat(exporter.getFinishedSpanItems()).hasSize(2);
        assertThat(exporter.getFinishedSpanItems()).filteredOn(span -> span.getStatus().getStatusCode()
                == io.opentelemetry.api.trace.StatusCode.ERROR).hasSize(1);
        assertThat(traced.health()).as("health is the transport's").isEqualTo("DOWN: test");
    }

    @Test
    void withoutACurrentSpanAnOutboxEventsHeadersAreLeftAlone() {
        assertThat(Tracing.withCurrentTrace(Map.of("order_id", "o-1"))).isEqualTo(Map.of("order_id", "o-1"));
    }

    /** An event appended in a batch (no current span) continues the trace its message carried; a bogus one is dropped. */
    @Test
    void anEventOfABatchedDeliveryCarriesTheTraceOfItsMessage() {
        String trace = "4bf92f3577b34da6a3ce929d0e0e4736";
        dev.idemkit.domain.Message carried = new dev.idemkit.domain.Message("m-1", new byte[0], Map.of("traceparent",
                "00-" + trace + "-00f067aa0ba902b7-01"), "orders");
        dev.idemkit.domain.Message bogus = new dev.idemkit.domain.Message("m-2", new byte[0], Map.of("traceparent",
                "00-" + trace + "-0000000000000000-01"), "orders");

        assertThat(Tracing.withTraceOf(carried, Map.of("order_id", "o-1")))
                .containsEntry("order_id", "o-1").containsEntry("traceparent", "00-" + trace + "-00f067aa0ba902b7-01");
        assertThat(Tracing.withTraceOf(bogus, Map.of("order_id", "o-2"))).isEqualTo(Map.of("order_id", "o-2"));
    }

    @Test
    void anEventAppendedWhileASpanIsCurrentCarriesThatSpan() {
        io.opentelemetry.api.trace.Span span = sdk.getTracer("t").spanBuilder("process").startSpan();
        dev.idemkit.domain.Message carried = new dev.idemkit.domain.Message("m-1", new byte[0], Map.of("traceparent",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), "orders");
        try (io.opentelemetry.context.Scope ignored = span.makeCurrent()) {
            assertThat(Tracing.withTraceOf(carried, Map.of()).get("traceparent")).startsWith("00-"
                    + span.getSpanContext().getTraceId() + "-" + span.getSpanContext().getSpanId() + "-");
        } finally {
            span.end();
        }
    }

    /** Without an SDK nothing is wrapped: the flow's hooks cost the hot path nothing. */
    @Test
    void withoutTracingTheEventsAreTheGivenOnes() {
        dev.idemkit.ports.out.ConsumerEvents events = (c, d, l) -> { };
        assertThat(Tracing.none().events(events)).isSameAs(events);
        assertThat(new Tracing(sdk).events(events)).isNotSameAs(events);
    }
}
