package dev.idemkit.adapters.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RedisSettingsTest {

    @Test
    void emptyEnvironmentGivesTheLocalSingleServerAndTheDefaultTtls() {
        RedisSettings s = RedisSettings.fromEnvironment(Map.of());
        assertThat(s.addresses()).containsExactly("redis://127.0.0.1:6379");
        assertThat(s.topology()).isEqualTo(RedisSettings.Topology.SINGLE);
        assertThat(s.keyPrefix()).isEqualTo("idemkit");
        assertThat(s.leaseTtl()).isEqualTo(Duration.ofSeconds(30));
        assertThat(s.retentionTtl()).isEqualTo(Duration.ofHours(24));
        assertThat(s).isEqualTo(RedisSettings.defaults());
    }

    @Test
    void passwordInTheUrlMovesOutOfTheAddressAndIsNeverPrinted() {
        RedisSettings s = RedisSettings.fromEnvironment(Map.of("IDEMKIT_REDIS_URL", "redis://:s3cret@cache:6380"));
        assertThat(s.addresses()).containsExactly("redis://cache:6380");
        assertThat(s.password()).isEqualTo("s3cret");
        assertThat(s.toString()).doesNotContain("s3cret").contains("password=***");
        RedisSettings env = RedisSettings.fromEnvironment(Map.of("IDEMKIT_REDIS_PASSWORD", "pw-xyz"));
        assertThat(env.toString()).doesNotContain("pw-xyz");
    }

    @Test
    void clusterTakesSeveralSeedNodes() {
        RedisSettings s = RedisSettings.fromEnvironment(Map.of("IDEMKIT_REDIS_URL", "redis://a:7000, redis://b:7001",
                "IDEMKIT_REDIS_TOPOLOGY", "cluster", "IDEMKIT_REDIS_LEASE_MS", "5000"));
        assertThat(s.addresses()).containsExactly("redis://a:7000", "redis://b:7001");
        assertThat(s.topology()).isEqualTo(RedisSettings.Topology.CLUSTER);
        assertThat(s.leaseTtl()).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void brokenSettingsAreRefusedNamingTheRule() {
        RedisSettings d = RedisSettings.defaults();
        assertThatThrownBy(() -> d.withKeyPrefix("has{brace}")).hasMessageContaining("key prefix");
        assertThatThrownBy(() -> d.withRetentionTtl(java.time.Duration.ofDays(36_501)))
                .hasMessageContaining("between 1 ms and 36500 days");
        assertThatThrownBy(() -> d.withLeaseTtl(java.time.Duration.ofSeconds(Long.MAX_VALUE)))
                .hasMessageContaining("between 1 ms and 36500 days");
        assertThatThrownBy(() -> d.withLeaseTtl(Duration.ZERO)).hasMessageContaining("TTL");
        assertThatThrownBy(() -> new RedisSettings(List.of("http://x"), RedisSettings.Topology.SINGLE, "", 0, "p",
                d.leaseTtl(), d.retentionTtl(), d.hashTagScope(), d.claimWait())).hasMessageContaining("redis://");
    }
}
