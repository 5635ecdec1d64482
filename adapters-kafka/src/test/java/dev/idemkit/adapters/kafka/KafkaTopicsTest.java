package dev.idemkit.adapters.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class KafkaTopicsTest {
    private static final List<Duration> BUCKETS = KafkaSettings.DEFAULT_BUCKETS;

    @Test
    void aRetryWaitsInTheSmallestBucketNotShorterThanItsDelayAndALongerDelayInTheLargest() {
        assertThat(KafkaTopics.bucketFor(BUCKETS, Duration.ofMillis(1))).isEqualTo(Duration.ofSeconds(1));
        assertThat(KafkaTopics.bucketFor(BUCKETS, Duration.ofSeconds(1))).isEqualTo(Duration.ofSeconds(1));
        assertThat(KafkaTopics.bucketFor(BUCKETS, Duration.ofMillis(1001))).isEqualTo(Duration.ofSeconds(5));
        assertThat(KafkaTopics.bucketFor(BUCKETS, Duration.ofSeconds(31))).isEqualTo(Duration.ofMinutes(2));
        assertThat(KafkaTopics.bucketFor(BUCKETS, Duration.ofHours(5))).isEqualTo(Duration.ofMinutes(10));
    }

    @Test
    void namesOfTheTopicsOfAWorkTopic() {
        assertThat(KafkaTopics.retryTopic("orders.placed", Duration.ofMinutes(2))).isEqualTo("orders.placed.retry.120s");
        assertThat(KafkaTopics.deadLetterTopic("orders.placed")).isEqualTo("orders.placed.dlt");
        assertThat(KafkaTopics.redrivenTopic("orders.placed")).isEqualTo("orders.placed.dlt.redriven");
        assertThat(KafkaTopics.isRetryTopicOf("orders.placed.retry.5s", "orders.placed", BUCKETS)).isTrue();
        assertThat(KafkaTopics.isRetryTopicOf("orders.placed.retry.7s", "orders.placed", BUCKETS)).isFalse();
    }

    @Test
    void unusableWorkTopicsAreRefusedWithTheRule() {
        assertThatThrownBy(() -> KafkaTopics.validWorkTopic("orders placed")).hasMessageContaining("letters, digits");
        assertThatThrownBy(() -> KafkaTopics.validWorkTopic("x".repeat(237))).hasMessageContaining("at most 236");
        assertThatThrownBy(() -> KafkaTopics.validWorkTopic("orders.dlt")).hasMessageContaining("idemkit's own");
        assertThatThrownBy(() -> KafkaTopics.validWorkTopic("orders.retry.5s")).hasMessageContaining("idemkit's own");
        assertThat(KafkaTopics.validWorkTopic("x".repeat(236))).hasSize(236);
    }

    @Test
    void settingsRefuseWhatCannotWork() {
        KafkaSettings ok = KafkaSettings.defaults("127.0.0.1:9092");
        assertThat(ok.group("orders")).isEqualTo("idemkit.orders");
        assertThatThrownBy(() -> KafkaSettings.defaults(" ")).hasMessageContaining("bootstrap servers");
        assertThat(ok.replicationFactor()).as("the broker's default.replication.factor")
                .isEqualTo(KafkaSettings.BROKER_DEFAULT_REPLICATION);
        assertThat(ok.withReplicationFactor((short) 3).replicationFactor()).isEqualTo((short) 3);
        assertThatThrownBy(() -> ok.withReplicationFactor((short) 0)).hasMessageContaining("replication factor");
        assertThatThrownBy(() -> ok.withReplicationFactor((short) -2)).hasMessageContaining("replication factor");
        assertThatThrownBy(() -> ok.withRetryBuckets(List.of())).hasMessageContaining("at least one");
        assertThatThrownBy(() -> ok.withRetryBuckets(List.of(Duration.ofSeconds(5), Duration.ofSeconds(1))))
                .hasMessageContaining("ascending");
        assertThatThrownBy(() -> ok.withRetryBuckets(List.of(Duration.ofMillis(1500))))
                .hasMessageContaining("whole positive seconds");
        assertThatThrownBy(() -> ok.withPartitions(0)).hasMessageContaining("positive");
    }
}
