package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RabbitSettingsTest {

    @Test
    void withoutVariablesTheDefaultsPointAtTheLocalBroker() {
        RabbitSettings s = RabbitSettings.fromEnvironment(Map.of());
        assertThat(s).isEqualTo(RabbitSettings.defaults());
        assertThat(s.uri()).isEqualTo(URI.create("amqp://guest:guest@127.0.0.1:5672/%2F"));
        assertThat(s.prefetch()).isEqualTo(100);
        assertThat(s.consumers()).isEqualTo(1);
        assertThat(s.maxAttemptsHint()).isEqualTo(3);
    }

    @Test
    void everyVariableOverridesItsSetting() {
        RabbitSettings s = RabbitSettings.fromEnvironment(Map.of(
                "IDEMKIT_RABBIT_URI", "amqp://app:s3cret@broker:5673/orders",
                "IDEMKIT_RABBIT_PREFETCH", "1000",
                "IDEMKIT_RABBIT_CONSUMERS", "4",
                "IDEMKIT_RABBIT_CONFIRM_TIMEOUT_MS", "2500",
                "IDEMKIT_RABBIT_MAX_ATTEMPTS", "5",
                "IDEMKIT_RABBIT_SHUTDOWN_GRACE_MS", "750"));
        assertThat(s).isEqualTo(new RabbitSettings(URI.create("amqp://app:s3cret@broker:5673/orders"), 1000, 4,
                Duration.ofMillis(2500), 5, Duration.ofMillis(750)));
    }

    @Test
    void thePasswordNeverAppearsInToStringNorInAnErrorAboutTheUri() {
        RabbitSettings s = RabbitSettings.defaults().withUri(URI.create("amqp://app:s3cret@broker:5672/%2F"));
        assertThat(s.toString()).doesNotContain("s3cret").contains("amqp://app:***@broker:5672/%2F");
        assertThatThrownBy(() -> RabbitSettings.fromEnvironment(Map.of("IDEMKIT_RABBIT_URI", "amqp://app:s3cret@bro ker/")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("IDEMKIT_RABBIT_URI")
                .hasMessageNotContaining("s3cret");
    }

    @Test
    void nonsenseSettingsAreRefusedWithTheRuleTheyBreak() {
        RabbitSettings d = RabbitSettings.defaults();
        assertThatThrownBy(() -> d.withPrefetch(0)).hasMessageContaining("prefetch");
        assertThatThrownBy(() -> d.withConsumers(0)).hasMessageContaining("consumers");
        assertThatThrownBy(() -> d.withConfirmTimeout(Duration.ZERO)).hasMessageContaining("confirmTimeout");
        assertThatThrownBy(() -> d.withShutdownGrace(Duration.ofSeconds(-1))).hasMessageContaining("shutdownGrace");
        assertThatThrownBy(() -> d.withUri(URI.create("http://broker/"))).hasMessageContaining("amqp");
    }
}
