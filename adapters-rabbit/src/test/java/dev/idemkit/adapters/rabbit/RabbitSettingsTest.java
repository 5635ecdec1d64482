package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.time.Duration;
import java.util.List;
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
        assertThat(s.queueType()).isEqualTo(RabbitSettings.QueueType.QUORUM);
        assertThat(s.addresses()).isEmpty();
        assertThat(s.deliveryLimit()).isEqualTo(20);
    }

    @Test
    void everyVariableOverridesItsSetting() {
        RabbitSettings s = RabbitSettings.fromEnvironment(Map.of(
                "IDEMKIT_RABBIT_URI", "amqp://app:s3cret@broker:5673/orders",
                "IDEMKIT_RABBIT_PREFETCH", "1000",
                "IDEMKIT_RABBIT_CONSUMERS", "4",
                "IDEMKIT_RABBIT_CONFIRM_TIMEOUT_MS", "2500",
                "IDEMKIT_RABBIT_MAX_ATTEMPTS", "5",
                "IDEMKIT_RABBIT_SHUTDOWN_GRACE_MS", "750",
                "IDEMKIT_RABBIT_QUEUE_TYPE", "Classic",
                "IDEMKIT_RABBIT_ADDRESSES", " node1:5672, node2:5673 ,node3:5674",
                "IDEMKIT_RABBIT_DELIVERY_LIMIT", "7"));
        assertThat(s).isEqualTo(new RabbitSettings(URI.create("amqp://app:s3cret@broker:5673/orders"), 1000, 4,
                Duration.ofMillis(2500), 5, Duration.ofMillis(750), RabbitSettings.QueueType.CLASSIC,
                List.of("node1:5672", "node2:5673", "node3:5674"), 7));
    }

    @Test
    void theDeliveryLimitIsIndependentOfTheAttemptCount() {
        // raising max attempts must not change an existing queue's x-delivery-limit (that would refuse to start)
        assertThat(RabbitSettings.fromEnvironment(Map.of("IDEMKIT_RABBIT_MAX_ATTEMPTS", "30")).deliveryLimit())
                .isEqualTo(20);
        assertThat(RabbitSettings.defaults().withMaxAttemptsHint(25).deliveryLimit()).isEqualTo(20);
        assertThat(RabbitSettings.fromEnvironment(Map.of("IDEMKIT_RABBIT_MAX_ATTEMPTS", "5",
                "IDEMKIT_RABBIT_DELIVERY_LIMIT", "2")).deliveryLimit()).isEqualTo(2);
        assertThatThrownBy(() -> RabbitSettings.defaults().withDeliveryLimit(0))
                .hasMessageContaining("deliveryLimit must be 1..10000");
    }

    @Test
    void badQueueTypesAndAddressesNameTheVariableAndTheRule() {
        assertThatThrownBy(() -> RabbitSettings.fromEnvironment(Map.of("IDEMKIT_RABBIT_QUEUE_TYPE", "stream")))
                .hasMessageContaining("IDEMKIT_RABBIT_QUEUE_TYPE").hasMessageContaining("quorum or classic");
        for (String bad : new String[] {"node1", "node1:", ":5672", "node1:99999", "node1:x", "amqp://node1:5672",
                "u:p@node1:5672", ",", "a:b:5672", "::1:5672", "[]:5672"}) {
            assertThatThrownBy(() -> RabbitSettings.fromEnvironment(Map.of("IDEMKIT_RABBIT_ADDRESSES", bad)))
                    .as(bad).hasMessageContaining("IDEMKIT_RABBIT_ADDRESSES");
        }
        assertThatThrownBy(() -> RabbitSettings.defaults().withAddresses(List.of("node1")))
                .hasMessageContaining("host:port");
        assertThat(RabbitSettings.parseAddresses("[::1]:5672,127.0.0.1:5673")).containsExactly("[::1]:5672",
                "127.0.0.1:5673");
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

    @Test
    void aUriJavaCannotReadAHostFromIsRefusedWithoutItsPassword() {
        // java.net.URI reads no host and no user info from "rabbit_mq": amqp-client would connect to localhost as guest
        assertThatThrownBy(() -> RabbitSettings.defaults().withUri(URI.create("amqp://app:s3cret@rabbit_mq:5672/%2F")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("amqp://app:***@rabbit_mq:5672/%2F")
                .hasMessageContaining("not '_'").message().doesNotContain("s3cret");
    }

    @Test
    void theRedactedUriHidesThePasswordAndKeepsTheRest() {
        assertThat(RabbitSettings.defaults().withUri(URI.create("amqps://app:p%40ss@broker.example:5671/prod"))
                .redactedUri()).isEqualTo("amqps://app:***@broker.example:5671/prod");
        assertThat(RabbitSettings.defaults().withUri(URI.create("amqp://broker.example")).redactedUri())
                .isEqualTo("amqp://broker.example");
        assertThat(RabbitSettings.redact(URI.create("amqp://u:a:b@host_x/v"))).isEqualTo("amqp://u:***@host_x/v");
    }
}
