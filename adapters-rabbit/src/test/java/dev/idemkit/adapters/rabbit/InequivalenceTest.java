package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The broker's refusal texts as RabbitMQ 3.10.8 printed them (seen on this machine), read back. */
class InequivalenceTest {

    @Test
    void readsEachOfTheThreeWaysTheBrokerPrintsAValue() {
        assertThat(Inequivalence.parse("PRECONDITION_FAILED - inequivalent arg 'x-queue-type' for queue 'orders' in"
                + " vhost '/': received the value 'quorum' of type 'longstr' but current is none")).contains(
                new Inequivalence("x-queue-type", "quorum", null, null));
        assertThat(Inequivalence.parse("PRECONDITION_FAILED - inequivalent arg 'x-delivery-limit' for queue 'q.x' in"
                + " vhost '/': received '7' but current is '5'")).contains(
                new Inequivalence("x-delivery-limit", "7", "5", null));
        assertThat(Inequivalence.parse("PRECONDITION_FAILED - inequivalent arg 'x-dead-letter-exchange' for queue 'q'"
                + " in vhost 'v': received none but current is the value 'dlx' of type 'longstr'")).contains(
                new Inequivalence("x-dead-letter-exchange", null, "dlx", "longstr"));
        assertThat(Inequivalence.parse("NOT_FOUND - no queue 'q' in vhost '/'")).isEmpty();
        String cut = "PRECONDITION_FAILED - inequivalent arg 'x-overflow' for queue '" + "q".repeat(200) + "' in vh...";
        assertThat(Inequivalence.parse(cut)).as("a reply the broker cut at 255 bytes still names the argument")
                .hasValueSatisfying(i -> {
                    assertThat(i.argument()).isEqualTo("x-overflow");
                    assertThat(i.cutReply()).isEqualTo(cut);
                    assertThat(i.adoptInto(new HashMap<>(Map.of("x-overflow", "reject-publish")))).isFalse();
                });
        assertThat(Inequivalence.parse(null)).isEmpty();
    }

    @Test
    void adoptingTheBrokersValueMovesTheProbeOnAndNeverLoops() {
        Map<String, Object> probe = new HashMap<>(Map.of("x-queue-type", "quorum", "x-delivery-limit", 20));
        assertThat(new Inequivalence("x-queue-type", "quorum", null, null).adoptInto(probe)).isTrue();
        assertThat(probe).doesNotContainKey("x-queue-type");
        assertThat(new Inequivalence("x-queue-type", "quorum", null, null).adoptInto(probe))
                .as("nothing left to change").isFalse();

        assertThat(new Inequivalence("x-delivery-limit", "20", "5", null).adoptInto(probe)).isTrue();
        assertThat(probe.get("x-delivery-limit")).isEqualTo(5);
        assertThat(new Inequivalence("x-delivery-limit", "20", "5", null).adoptInto(probe)).isFalse();

        assertThat(new Inequivalence("x-message-ttl", null, "1000", "signedint").adoptInto(probe)).isTrue();
        assertThat(probe.get("x-message-ttl")).isEqualTo(1000);
        assertThat(new Inequivalence("x-odd", null, "1", "table").adoptInto(probe)).as("unknown type").isFalse();
    }
}
