package dev.idemkit.app.tracing;

import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import java.util.List;
import java.util.Map;

/**
 * Tracing from the standard OpenTelemetry environment: when {@code OTEL_EXPORTER_OTLP_ENDPOINT},
 * {@code OTEL_EXPORTER_OTLP_TRACES_ENDPOINT} or {@code OTEL_TRACES_EXPORTER} is set (and {@code OTEL_SDK_DISABLED} is
 * not {@code true}), the SDK is configured from the {@code OTEL_*} variables (OTLP by default; service name
 * {@code idemkit} unless {@code OTEL_SERVICE_NAME} says otherwise; metrics and logs stay off: metrics are Micrometer's);
 * otherwise no traces at all.
 */
public final class TracingSetup {
    static final List<String> ENABLING = List.of("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "OTEL_TRACES_EXPORTER");

    private TracingSetup() {}

    /** Scheme, host and port only: an endpoint may carry credentials, which are never printed. */
    static String endpoint(String configured) {
        if (configured == null || configured.isBlank()) {
            return "the exporter OTEL_TRACES_EXPORTER names";
        }
        try {
            java.net.URI u = java.net.URI.create(configured.strip());
            return u.getScheme() + "://" + u.getHost() + (u.getPort() > 0 ? ":" + u.getPort() : "");
        } catch (IllegalArgumentException e) {
            return "an OTLP endpoint (unparsable, not printed)";
        }
    }

    public static Tracing fromEnvironment(Map<String, String> env) {
        boolean wanted = ENABLING.stream().anyMatch(k -> env.get(k) != null && !env.get(k).isBlank());
        if (!wanted || "true".equalsIgnoreCase(env.getOrDefault("OTEL_SDK_DISABLED", ""))) {
            return Tracing.none();
        }
        OpenTelemetrySdk sdk = AutoConfiguredOpenTelemetrySdk.builder()
                .addPropertiesSupplier(() -> Map.of("otel.service.name", "idemkit", "otel.metrics.exporter", "none",
                        "otel.logs.exporter", "none"))
                .disableShutdownHook()
                .build().getOpenTelemetrySdk();
        String where = endpoint(env.getOrDefault("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                env.getOrDefault("OTEL_EXPORTER_OTLP_ENDPOINT", null)));
        return new Tracing(sdk, "OpenTelemetry SDK from OTEL_* (traces to " + where + ")", sdk::close);
    }
}
