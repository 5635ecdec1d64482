package dev.idemkit.ports.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.Message;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.forwarding.ForwardingDelivery;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@link Delivery#ackAll}: one bulk call per transport group, the others one by one, failures after the rest. */
class AckAllTest {

    @Test
    void deliveriesAreAckedInOneCallPerGroupAndTheRestOneByOne() {
        List<List<String>> calls = new ArrayList<>();
        Delivery.BulkAck a = ds -> calls.add(ds.stream().map(d -> "a:" + d.message().rawId()).toList());
        Delivery.BulkAck b = ds -> calls.add(ds.stream().map(d -> "b:" + d.message().rawId()).toList());
        RecordingDelivery plain = delivery("p");
        List<Delivery> all = List.of(grouped("1", a), grouped("2", b), plain, grouped("3", a), grouped("4", b));

        Delivery.ackAll(all);

        assertThat(calls).containsExactlyInAnyOrder(List.of("a:1", "a:3"), List.of("b:2", "b:4"));
        assertThat(plain.settlement).isEqualTo(RecordingDelivery.Settlement.ACK);
        assertThat(plain.settlements).isEqualTo(1);
    }

    @Test
    void aFailingGroupIsReportedAfterTheOthersAreAcked() {
        List<String> acked = new ArrayList<>();
        Delivery.BulkAck failing = ds -> {
            throw new IllegalStateException("already settled");
        };
        Delivery.BulkAck fine = ds -> ds.forEach(d -> acked.add(d.message().rawId()));
        RecordingDelivery plain = delivery("p");

        assertThatThrownBy(() -> Delivery.ackAll(List.of(grouped("1", failing), grouped("2", fine), plain)))
                .isInstanceOf(IllegalStateException.class).hasMessage("already settled");
        assertThat(acked).containsExactly("2");
        assertThat(plain.settlements).isEqualTo(1);
    }

    private static RecordingDelivery delivery(String id) {
        return new RecordingDelivery(new Message(id, id.getBytes(StandardCharsets.UTF_8), Map.of(), "q"), 1);
    }

    private static Delivery grouped(String id, Delivery.BulkAck bulk) {
        return new ForwardingDelivery(delivery(id)) {
            @Override
            public Optional<Delivery.BulkAck> bulkAck() {
                return Optional.of(bulk);
            }
        };
    }
}
