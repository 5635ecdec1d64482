package dev.idemkit.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idemkit.domain.Message;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.service.ConsumerSettings;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class BatchingHandlerTest {
    private final List<String> events = new CopyOnWriteArrayList<>();
    private final List<Delivery> handedOver = new CopyOnWriteArrayList<>();

    private final BatchingHandler.Settings settings = new BatchingHandler.Settings(10, Duration.ofMillis(2), 2,
            ConsumerSettings.DEFAULT_MAX_BODY_BYTES);

    @Test
    void every_delivery_is_acked_only_after_the_batch_holding_it_committed_and_duplicates_are_acked_too() {
        Set<String> seen = new HashSet<>();
        BatchingHandler handler = new BatchingHandler(messages -> {
            List<Outcome> outcomes = new ArrayList<>();
            synchronized (seen) {
                for (Message m : messages) {
                    outcomes.add(seen.add(m.rawId()) ? Outcome.PROCESSED : Outcome.DUPLICATE);
                }
            }
            events.add("commit " + String.join(",", messages.stream().map(m -> m.headers().get("n")).toList()));
            return outcomes;
        }, handedOver::add, settings);
        List<FakeDelivery> deliveries = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            deliveries.add(new FakeDelivery("m-" + (i < 140 ? i : i - 140), i)); // the last 60 are duplicates
        }
        deliveries.forEach(handler::onDelivery);
        await().atMost(Duration.ofSeconds(10)).until(() -> deliveries.stream().allMatch(d -> d.settledAs != null));
        handler.close();

        assertThat(deliveries).allMatch(d -> d.settledAs.equals("ack"));
        assertThat(handedOver).isEmpty();
        for (int i = 0; i < events.size(); i++) {
            String e = events.get(i);
            if (e.startsWith("ack ")) {
                String n = e.substring(4);
                boolean committedBefore = events.subList(0, i).stream()
                        .anyMatch(c -> c.startsWith("commit ") && List.of(c.substring(7).split(",")).contains(n));
                assertThat(committedBefore).as("ack of delivery %s follows the commit of its batch", n).isTrue();
            }
        }
        assertThat(handler.batched()).isEqualTo(200);
        assertThat(handler.batches()).isGreaterThanOrEqualTo(20);
    }

    @Test
    void a_batch_that_fails_acks_nothing_itself_and_sends_each_delivery_through_the_per_message_path() {
        BatchingHandler handler = new BatchingHandler(messages -> {
            throw new IllegalStateException("connection lost before commit");
        }, handedOver::add, settings);
        List<Delivery> batch = List.of(new FakeDelivery("a"), new FakeDelivery("b"), new FakeDelivery("a"));
        handler.settle(batch);
        handler.close();

        assertThat(events).isEmpty();
        assertThat(handedOver).containsExactlyElementsOf(batch);
        assertThat(handler.viaFallback()).isEqualTo(3);
    }

    @Test
    void a_rejected_outcome_is_not_acked_but_handed_to_the_per_message_path_which_dead_letters_it() {
        BatchingHandler handler = new BatchingHandler(messages -> List.of(Outcome.PROCESSED,
                Outcome.rejected("message id reused with a different body"), Outcome.DUPLICATE), handedOver::add,
                settings);
        FakeDelivery a = new FakeDelivery("a");
        FakeDelivery b = new FakeDelivery("b");
        FakeDelivery c = new FakeDelivery("c");
        handler.settle(List.of(a, b, c));
        handler.close();

        assertThat(a.settledAs).isEqualTo("ack");
        assertThat(b.settledAs).isNull();
        assertThat(c.settledAs).isEqualTo("ack");
        assertThat(handedOver).containsExactly(b);
    }

    @Test
    void a_delivery_without_a_usable_id_skips_the_batch_and_goes_to_the_per_message_path_at_once() {
        BatchingHandler handler = new BatchingHandler(messages -> {
            events.add("commit");
            return messages.stream().map(m -> (Outcome) Outcome.PROCESSED).toList();
        }, handedOver::add, settings);
        FakeDelivery noId = new FakeDelivery(null);
        handler.onDelivery(noId);
        handler.close();

        assertThat(handedOver).containsExactly(noId);
        assertThat(events).isEmpty();
    }

    private final class FakeDelivery implements Delivery {
        private final Message message;
        volatile String settledAs;

        FakeDelivery(String id) {
            this(id, -1);
        }

        FakeDelivery(String id, int n) {
            this.message = new Message(id, "{\"account_id\":\"acc-1\",\"amount\":1.00}".getBytes(StandardCharsets.UTF_8),
                    Map.of("n", Integer.toString(n)), "accounts.credit");
        }

        @Override
        public Message message() {
            return message;
        }

        @Override
        public int attempt() {
            return 1;
        }

        @Override
        public List<AttemptRecord> history() {
            return List.of();
        }

        @Override
        public boolean redelivered() {
            return false;
        }

        @Override
        public void ack() {
            events.add("ack " + message.headers().get("n"));
            settledAs = "ack";
        }

        @Override
        public void retryAfter(Duration delay, AttemptRecord failed) {
            settledAs = "retry";
        }

        @Override
        public void deadLetter(String reason, AttemptRecord failed) {
            settledAs = "dead-letter";
        }
    }
}
