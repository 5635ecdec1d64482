package dev.idemkit.adapters.sqs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class SqsSettingsTest {

    @Test
    void withoutAnEndpointTheDefaultCredentialsChainIsUsed() {
        SqsSettings s = SqsSettings.fromEnvironment(Map.of("IDEMKIT_SQS_REGION", "sa-east-1"));
        assertThat(s.endpoint()).isEmpty();
        assertThat(s.staticCredentials()).isEmpty();
        assertThat(s.region()).isEqualTo("sa-east-1");
        assertThat(s.waitTimeSeconds()).isEqualTo(20);
        assertThat(s.batchSize()).isEqualTo(10);
    }

    @Test
    void aLocalEndpointComesWithStaticCredentialsFromTheEnvironment() {
        SqsSettings s = SqsSettings.fromEnvironment(Map.of("IDEMKIT_SQS_ENDPOINT", "http://127.0.0.1:9324",
                "IDEMKIT_SQS_ACCESS_KEY_ID", "AKIDLOCAL", "IDEMKIT_SQS_SECRET_ACCESS_KEY", "s3cr3t-value",
                "IDEMKIT_SQS_WAIT_SECONDS", "2", "IDEMKIT_SQS_VISIBILITY_SECONDS", "9"));
        assertThat(s.endpoint()).contains(URI.create("http://127.0.0.1:9324"));
        assertThat(s.staticCredentials()).hasValueSatisfying(c -> assertThat(c.accessKeyId()).isEqualTo("AKIDLOCAL"));
        assertThat(s.waitTimeSeconds()).isEqualTo(2);
        assertThat(s.visibilityTimeout()).isEqualTo(Duration.ofSeconds(9));
        assertThat(s.heartbeatInterval()).isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void theSecretIsNeverPrinted() {
        SqsSettings s = SqsSettings.local(URI.create("http://127.0.0.1:9324"))
                .withEndpoint(URI.create("http://127.0.0.1:9324"), new SqsSettings.StaticCredentials("AKID", "s3cr3t-value"));
        assertThat(s.toString()).contains("AKID").doesNotContain("s3cr3t-value");
    }

    @Test
    void staticCredentialsWithoutAnEndpointAreRefused() {
        assertThatThrownBy(() -> new SqsSettings(Optional.empty(), "us-east-1",
                Optional.of(new SqsSettings.StaticCredentials("a", "b")), 20, 10, 8, Duration.ofSeconds(30),
                Duration.ofSeconds(10), 0, Duration.ofSeconds(10)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("default credentials provider chain");
    }

    @Test
    void sqsLimitsAreEnforced() {
        SqsSettings d = SqsSettings.defaults("us-east-1");
        assertThatThrownBy(() -> d.withBatchSize(11)).hasMessageContaining("1..10");
        assertThatThrownBy(() -> d.withWaitTimeSeconds(21)).hasMessageContaining("0..20");
        assertThatThrownBy(() -> d.withVisibility(Duration.ofSeconds(5), Duration.ofSeconds(5)))
                .hasMessageContaining("shorter than the visibility timeout");
        assertThatThrownBy(() -> d.withVisibility(Duration.ofHours(13), Duration.ofSeconds(5)))
                .hasMessageContaining("12 h");
    }

    /** Law: a delay becomes the fewest whole seconds that cover it, capped at 12 h. */
    @Test
    void delaysRoundUpToWholeSecondsWithinTwelveHours() {
        qt().withExamples(1000).forAll(longs().between(0, Duration.ofHours(13).toMillis())).checkAssert(ms -> {
            Duration delay = Duration.ofMillis(ms);
            int seconds = SqsTimes.visibilitySeconds(delay);
            if (delay.compareTo(SqsTimes.MAX_VISIBILITY) >= 0) {
                assertThat(seconds).isEqualTo(43_200);
            } else {
                assertThat(Duration.ofSeconds(seconds)).isGreaterThanOrEqualTo(delay)
                        .isLessThan(delay.plusSeconds(1));
            }
        });
    }
}
