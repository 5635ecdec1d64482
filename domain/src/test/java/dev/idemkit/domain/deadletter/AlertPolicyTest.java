package dev.idemkit.domain.deadletter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class AlertPolicyTest {

    @Test
    void elevenDeadLettersAlertAtTheDefaultButTenDoNot() {
        AlertPolicy policy = AlertPolicy.defaults();
        assertThat(policy.threshold()).isEqualTo(10);
        assertThat(policy.shouldAlert(11)).isTrue();
        assertThat(policy.shouldAlert(10)).isFalse();
        assertThat(policy.shouldAlert(0)).isFalse();
    }

    @Test
    void aZeroThresholdAlertsOnTheFirstDeadLetter() {
        assertThat(new AlertPolicy(0).shouldAlert(1)).isTrue();
        assertThat(new AlertPolicy(0).shouldAlert(0)).isFalse();
    }

    @Test
    void aNegativeThresholdIsRefused() {
        assertThatThrownBy(() -> new AlertPolicy(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(">= 0");
    }
}
