package dev.idemkit.app.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class TracingSetupTest {

    @Test
    void withoutOtelVariablesThereAreNoTraces() {
        assertThat(TracingSetup.fromEnvironment(Map.of()).description()).startsWith("none");
        assertThat(TracingSetup.fromEnvironment(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318",
                "OTEL_SDK_DISABLED", "true")).description()).startsWith("none");
    }

    @Test
    void anOtlpEndpointTurnsTheSdkOnAndIsPrintedWithoutCredentials() {
        Tracing t = TracingSetup.fromEnvironment(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT",
                "http://user:secret@127.0.0.1:4318"));
        try {
            assertThat(t.description()).contains("OpenTelemetry SDK").contains("http://127.0.0.1:4318")
                    .doesNotContain("secret");
        } finally {
            t.close();
        }
    }
}
