package dev.idemkit.app.tracing;

import dev.idemkit.domain.ConsumerName;
import dev.idemkit.domain.Message;
import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Traces of a message's life through idemkit, on the OpenTelemetry API (the SDK and exporter are the user's choice;
 * {@link OpenTelemetry#noop()} costs next to nothing): a producer span per publish, whose context travels in the
 * message's headers ({@code traceparent}, W3C); a consumer span per delivery, a child of that context, carrying the
 * consumer, message id, attempt, the decision (processed / duplicate / stale / retried / dead_lettered) and the store
 * latency, ended when the runtime decides (batched deliveries included); a span per redrive. Retry copies and dead
 * letters keep the original headers, so a retried, dead-lettered and redriven message stays one trace.
 *
 * <p>A {@code traceparent} read from the wire is data: a malformed one is ignored (a new trace starts), and it only
 * ever names a parent.
 */
public final class Tracing {
    static final AttributeKey<String> CONSUMER = AttributeKey.stringKey("idemkit.consumer");
    static final AttributeKey<String> DECISION = AttributeKey.stringKey("idemkit.decision");
    static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("idemkit.attempt");
    static final AttributeKey<Double> STORE_MS = AttributeKey.doubleKey("idemkit.store_latency_ms");
    static final AttributeKey<String> MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");
    static final AttributeKey<String> DESTINATION = AttributeKey.stringKey("messaging.destination.name");
    static final AttributeKey<String> OPERATION = AttributeKey.stringKey("messaging.operation.type");
    static final AttributeKey<String> APPROVED_BY = AttributeKey.stringKey("idemkit.redrive.approved_by");
    static final AttributeKey<String> REDRIVE_ACTION = AttributeKey.stringKey("idemkit.redrive.action");
    /** Deliveries whose decision is pending, at most this many (beyond: ended as "unknown", so nothing grows). */
    static final int MAX_OPEN = 100_000;

    private static final TextMapGetter<Map<String, String>> GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
            return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    private final Tracer tracer;
    private final TextMapPropagator propagator;
    /** Consumer spans by their message (the runtimes report a decision with the same instance). */
    private final Map<Message, Span> open = Collections.synchronizedMap(new IdentityHashMap<>());

    private final String description;
    private final Runnable onClose;

    /** On {@code otel} (the caller keeps and closes its SDK). */
    public Tracing(OpenTelemetry otel) {
        this(otel, "OpenTelemetry given by the caller", () -> { });
    }

    Tracing(OpenTelemetry otel, String description, Runnable onClose) {
        Objects.requireNonNull(otel, "otel");
        this.tracer = otel.getTracer("dev.idemkit");
        this.propagator = otel.getPropagators().getTextMapPropagator();
        this.description = Objects.requireNonNull(description, "description");
        this.onClose = Objects.requireNonNull(onClose, "onClose");
    }

    /** No traces (the OpenTelemetry API's no-op). */
    public static Tracing none() {
        return new Tracing(OpenTelemetry.noop(), "none (set OTEL_EXPORTER_OTLP_ENDPOINT to export them over OTLP)",
                () -> { });
    }

    /** Where the traces go, for the start-up banner. */
    public String description() {
        return description;
    }

    /** Flushes and closes the SDK this owns, if any. */
    public void close() {
        onClose.run();
    }

    /** {@code handler} with a consumer span per delivery, current while the handler runs on this thread. */
    public DeliveryHandler consumer(String queue, DeliveryHandler handler) {
        return delivery -> {
            Message m = delivery.message();
            Span span = tracer.spanBuilder("process " + queue).setSpanKind(SpanKind.CONSUMER)
                    .setParent(propagator.extract(Context.root(), m.headers(), GETTER))
                    .setAttribute(DESTINATION, queue).setAttribute(OPERATION, "process")
                    .setAttribute(MESSAGE_ID, printable(m.rawId())).setAttribute(ATTEMPT, (long) delivery.attempt())
                    .startSpan();
            if (open.size() >= MAX_OPEN) {
                span.setAttribute(DECISION, "untracked");
                span.end();
            } else {
                open.put(m, span);
            }
            try (Scope ignored = span.makeCurrent()) {
                handler.onDelivery(delivery);
            } catch (RuntimeException | Error e) {
                Span s = open.remove(m);
                if (s != null) {
                    s.recordException(e);
                    s.setStatus(StatusCode.ERROR);
                    s.end();
                }
                throw e;
            }
        };
    }

    /** {@code inner}'s decisions, and each ends its delivery's span with the decision and the store latency. */
    public ConsumerEvents events(ConsumerEvents inner) {
        return new ConsumerEvents() {
            @Override
            public void onDecision(ConsumerName consumer, Decision decision, Duration storeLatency) {
                inner.onDecision(consumer, decision, storeLatency);
            }

            @Override
            public void onDecision(ConsumerName consumer, Decision decision, Duration storeLatency, Message message) {
                inner.onDecision(consumer, decision, storeLatency, message);
                Span span = open.remove(message);
                if (span != null) {
                    span.setAttribute(CONSUMER, consumer.value());
                    span.setAttribute(DECISION, decision.name().toLowerCase(Locale.ROOT));
                    span.setAttribute(STORE_MS, storeLatency.toNanos() / 1e6);
                    if (decision == Decision.DEAD_LETTERED) {
                        span.setStatus(StatusCode.ERROR, "dead-lettered");
                    }
                    span.end();
                }
            }
        };
    }

    /** {@code transport} whose publishes are producer spans whose context the message carries. */
    public MessageTransport publishing(MessageTransport transport) {
        return new MessageTransport() {
            @Override
            public Subscription subscribe(String queue, DeliveryHandler handler) {
                return transport.subscribe(queue, handler);
            }

            @Override
            public void publish(String queue, OutgoingMessage message) {
                Span span = tracer.spanBuilder("publish " + queue).setSpanKind(SpanKind.PRODUCER)
                        .setAttribute(DESTINATION, queue).setAttribute(OPERATION, "send")
                        .setAttribute(MESSAGE_ID, printable(message.id())).startSpan();
                try (Scope ignored = span.makeCurrent()) {
                    Map<String, String> headers = new HashMap<>(message.headers());
                    propagator.inject(Context.current(), headers, Map::put);
                    transport.publish(queue, message.withHeaders(headers));
                } catch (RuntimeException e) {
                    span.recordException(e);
                    span.setStatus(StatusCode.ERROR);
                    throw e;
                } finally {
                    span.end();
                }
            }

            @Override
            public void close() {
                transport.close();
            }
        };
    }

    /** A span for the redrive of one dead letter, in the trace its message carries; ended by the caller. */
    public Span redrive(String queue, Message original, Approval approval) {
        return tracer.spanBuilder("redrive " + queue).setSpanKind(SpanKind.PRODUCER)
                .setParent(propagator.extract(Context.root(), original.headers(), GETTER))
                .setAttribute(DESTINATION, queue).setAttribute(MESSAGE_ID, printable(original.rawId()))
                .setAttribute(APPROVED_BY, printable(approval.approvedBy())).startSpan();
    }

    /** Records what the redrive did on {@code span} and ends it. */
    public static void redriven(Span span, String action) {
        span.setAttribute(REDRIVE_ACTION, action);
        span.end();
    }

    private static String printable(String s) {
        if (s == null) {
            return "(none)";
        }
        StringBuilder out = new StringBuilder(Math.min(s.length(), 256));
        for (int i = 0; i < s.length() && i < 256; i++) {
            char c = s.charAt(i);
            out.append(c < 0x20 || c == 0x7f ? '?' : c);
        }
        return out.toString();
    }
}
