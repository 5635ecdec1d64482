package dev.idemkit.app.tracing;

import dev.idemkit.domain.ConsumerName;
import dev.idemkit.domain.Message;
import dev.idemkit.domain.Printable;
import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.Delivery;
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
import java.util.HashMap;
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
    static final AttributeKey<String> KEY_OUTCOME = AttributeKey.stringKey("idemkit.idempotency_key.outcome");
    static final AttributeKey<String> HTTP_METHOD = AttributeKey.stringKey("http.request.method");
    static final AttributeKey<String> HTTP_ROUTE = AttributeKey.stringKey("http.route");
    static final AttributeKey<Long> HTTP_STATUS = AttributeKey.longKey("http.response.status_code");

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
    private final String description;
    private final Runnable onClose;
    /** False for {@link #none()}: the consumer and decision hooks are then not installed at all (no hot-path cost). */
    private final boolean enabled;

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
        this.enabled = otel != OpenTelemetry.noop();
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

    /**
     * {@code inner}'s decisions, and a consumer span per delivery through the flow's hooks: started when the delivery
     * enters the flow (a child of the context its message carries), current while its effect runs on the flow's thread,
     * ended with the decision and the store latency (batched deliveries: when their batch settles).
     */
    public ConsumerEvents events(ConsumerEvents inner) {
        if (!enabled) {
            return inner;
        }
        return new ConsumerEvents() {
            @Override
            public void onDecision(ConsumerName consumer, Decision decision, Duration storeLatency) {
                inner.onDecision(consumer, decision, storeLatency);
            }

            @Override
            public Observation started(ConsumerName consumer, Delivery delivery) {
                Observation metrics = inner.started(consumer, delivery);
                Message m = delivery.message();
                Span span = tracer.spanBuilder("process " + m.originQueue()).setSpanKind(SpanKind.CONSUMER)
                        .setParent(propagator.extract(Context.root(), m.headers(), GETTER))
                        .setAttribute(DESTINATION, m.originQueue()).setAttribute(OPERATION, "process")
                        .setAttribute(MESSAGE_ID, printable(m.rawId())).setAttribute(ATTEMPT, (long) delivery.attempt())
                        .setAttribute(CONSUMER, consumer.value()).startSpan();
                return new SpanObservation(span, metrics);
            }
        };
    }

    /** One delivery's consumer span. */
    private static final class SpanObservation implements ConsumerEvents.Observation {
        private final Span span;
        private final ConsumerEvents.Observation metrics;

        SpanObservation(Span span, ConsumerEvents.Observation metrics) {
            this.span = span;
            this.metrics = metrics;
        }

        @Override
        public void decided(ConsumerEvents.Decision decision, Duration storeLatency) {
            metrics.decided(decision, storeLatency);
            span.setAttribute(DECISION, decision.name().toLowerCase(Locale.ROOT));
            span.setAttribute(STORE_MS, storeLatency.toNanos() / 1e6);
            if (decision == ConsumerEvents.Decision.DEAD_LETTERED) {
                span.setStatus(StatusCode.ERROR, "dead-lettered");
            }
            span.end();
        }

        @Override
        public void failed(Throwable failure) {
            metrics.failed(failure);
            span.recordException(failure);
        }

        @Override
        public void abandoned(Throwable cause) {
            metrics.abandoned(cause);
            span.recordException(cause);
            span.setStatus(StatusCode.ERROR, "not settled");
            span.end();
        }

        @Override
        public ConsumerEvents.Scope enter() {
            Scope scope = span.makeCurrent();
            return scope::close;
        }
    }

    /**
     * {@code headers} plus the W3C context of the span current on this thread, if any: an outbox event appended inside
     * a traced request or delivery is relayed in that trace.
     */
    public static Map<String, String> withCurrentTrace(Map<String, String> headers) {
        if (!Span.current().getSpanContext().isValid()) {
            return headers;
        }
        Map<String, String> out = new HashMap<>(headers);
        io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator.getInstance().inject(Context.current(), out,
                Map::put);
        return out;
    }

    /**
     * {@code headers} plus the trace an outbox event appended for {@code message} continues: the span current on this
     * thread (a single-message delivery), else the context {@code message} itself carries (a batched delivery, whose
     * effect runs on the batch's worker), validated by the W3C propagator; nothing when neither has one.
     */
    public static Map<String, String> withTraceOf(Message message, Map<String, String> headers) {
        if (Span.current().getSpanContext().isValid()) {
            return withCurrentTrace(headers);
        }
        io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator w3c =
                io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator.getInstance();
        Context carried = w3c.extract(Context.root(), message.headers(), GETTER);
        if (!Span.fromContext(carried).getSpanContext().isValid()) {
            return headers;
        }
        Map<String, String> out = new HashMap<>(headers);
        w3c.inject(carried, out, Map::put);
        return out;
    }

    /**
     * {@code transport} whose publishes are producer spans whose context the message carries; a message that already
     * carries one (an outbox event appended in a traced transaction) is published as a child of it. Without traces
     * ({@link #none()}) it is {@code transport} itself: a no-op span per publish still cost its name, attributes and a
     * copy of the headers (the outbox relay's profile).
     */
    public MessageTransport publishing(MessageTransport transport) {
        if (!enabled) {
            return transport; // the no-op propagator injects nothing: headers go out as they are, as before
        }
        return new MessageTransport() {
            @Override
            public Subscription subscribe(String queue, DeliveryHandler handler) {
                return transport.subscribe(queue, handler);
            }

            @Override
            public void publish(String queue, OutgoingMessage message) {
                Span span = publishSpan(queue, message);
                try (Scope ignored = span.makeCurrent()) {
                    transport.publish(queue, carrying(message));
                } catch (RuntimeException e) {
                    failed(span, e);
                    throw e;
                } finally {
                    span.end();
                }
            }

            /**
             * Pipelined, as the transport's own (the outbox relay publishes through here): the span ends when the
             * confirm, nack or timeout comes.
             */
            @Override
            public java.util.concurrent.CompletableFuture<Void> publishAsync(String queue, OutgoingMessage message) {
                Span span = publishSpan(queue, message);
                java.util.concurrent.CompletableFuture<Void> confirm;
                try (Scope ignored = span.makeCurrent()) {
                    confirm = transport.publishAsync(queue, carrying(message));
                } catch (RuntimeException | Error e) { // an Error too: no span left open
                    failed(span, e);
                    span.end();
                    throw e;
                }
                return confirm.whenComplete((ok, e) -> {
                    if (e != null) {
                        failed(span, e);
                    }
                    span.end();
                });
            }

            @Override
            public String health() {
                return transport.health();
            }

            @Override
            public void close() {
                transport.close();
            }
        };
    }

    private Span publishSpan(String queue, OutgoingMessage message) {
        return tracer.spanBuilder("publish " + queue).setSpanKind(SpanKind.PRODUCER)
                .setParent(propagator.extract(Context.current(), message.headers(), GETTER))
                .setAttribute(DESTINATION, queue).setAttribute(OPERATION, "send")
                .setAttribute(MESSAGE_ID, printable(message.id())).startSpan();
    }

    /** The message with the current span's context in its headers. */
    private OutgoingMessage carrying(OutgoingMessage message) {
        Map<String, String> headers = new HashMap<>(message.headers());
        propagator.inject(Context.current(), headers, Map::put);
        return message.withHeaders(headers);
    }

    private static void failed(Span span, Throwable e) {
        span.recordException(e);
        span.setStatus(StatusCode.ERROR);
    }

    /**
     * A server span for one HTTP request, a child of the {@code traceparent} the client sent (if any, and valid); the
     * caller makes it current, records the outcome with {@link #outcome} and ends it.
     */
    public Span server(String method, String route, com.sun.net.httpserver.Headers headers) {
        return tracer.spanBuilder(method + " " + route).setSpanKind(SpanKind.SERVER)
                .setParent(propagator.extract(Context.root(), headers, HEADERS))
                .setAttribute(HTTP_METHOD, method).setAttribute(HTTP_ROUTE, route).startSpan();
    }

    /** The Idempotency-Key outcome (executed, replayed, conflict, mismatch, ...) on the current span, if any. */
    public static void outcome(String outcome) {
        Span.current().setAttribute(KEY_OUTCOME, outcome);
    }

    /** The response status on {@code span}; a 5xx marks it failed. */
    public static void status(Span span, int status) {
        if (status <= 0) {
            return; // no response was sent
        }
        span.setAttribute(HTTP_STATUS, (long) status);
        if (status >= 500) {
            span.setStatus(StatusCode.ERROR);
        }
    }

    private static final TextMapGetter<com.sun.net.httpserver.Headers> HEADERS = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(com.sun.net.httpserver.Headers carrier) {
            return carrier.keySet();
        }

        @Override
        public String get(com.sun.net.httpserver.Headers carrier, String key) {
            return carrier == null ? null : carrier.getFirst(key);
        }
    };

    /**
     * The redrive operation's hook: a span per redriven dead letter, in the trace its message carries, current while it
     * moves, ended with what was done (the console and {@code idemkit dlq redrive} both go through it).
     */
    public dev.idemkit.ports.out.RedriveEvents redriveEvents() {
        return (queue, entry, approval) -> {
            Span span = redrive(queue, entry.deadLetter().original(), approval);
            return new dev.idemkit.ports.out.RedriveEvents.Observation() {
                @Override
                public void finished(String action) {
                    redriven(span, action);
                }

                @Override
                public ConsumerEvents.Scope enter() {
                    Scope scope = span.makeCurrent();
                    return scope::close;
                }
            };
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

    /** An id or name from the wire as a span attribute: {@link Printable#text}, at most 256 characters. */
    private static String printable(String s) {
        return s == null ? "(none)" : Printable.text(s, 256);
    }
}
