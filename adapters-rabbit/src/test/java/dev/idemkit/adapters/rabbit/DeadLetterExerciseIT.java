package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.adapters.rabbit.RabbitDeadLetter.BrokerDeath;
import dev.idemkit.domain.deadletter.AlertPolicy;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.deadletter.DeadLetter;
import dev.idemkit.domain.deadletter.RedriveWindow;
import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.out.Alert;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.service.DeadLetterService;
import dev.idemkit.ports.service.ProcessedKeys;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The seed's exercise 5, literally: a consumer that always fails, a broker dead-letter exchange, the
 * DLQ with x-death, a DLQ inspector with origin queue, every attempt's timestamp and the reason, and
 * an alert past 10 dead letters.
 */
class DeadLetterExerciseIT extends RabbitITBase {
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

    private void alwaysFail(String queue) {
        Consumers consumers = new Consumers();
        subscribe(transport, queue, consumers.runtime((message, work) -> {
            calls.computeIfAbsent(message.rawId(), k -> new AtomicInteger()).incrementAndGet();
            throw new IllegalStateException("inventory service unavailable");
        }));
    }

    @Test
    void aMessageThatAlwaysFailsIsDeadLetteredAfterExactlyThreeAttemptsWithXDeathAndItsHistory() throws Exception {
        String queue = queue("exercise5");
        alwaysFail(queue);
        byte[] body = "{\"order_id\":\"o-1\"}".getBytes(StandardCharsets.UTF_8);
        transport.publish(queue, OutgoingMessage.of("order-1", body).withHeaders(Map.of("x-tenant", "acme")));

        RabbitDeadLetterQueue dlq = transport.deadLetterQueue();
        Eventually.await(PATIENCE, "the dead letter", () -> dlq.depth(queue) == 1);
        Eventually.pause(500);
        assertThat(calls.get("order-1")).as("handler calls").hasValue(3);

        RabbitDeadLetter found = dlq.inspect(queue, 10).get(0);
        DeadLetter dl = found.entry().deadLetter();
        assertThat(dl.originQueue()).isEqualTo(queue);
        assertThat(dl.original().rawId()).isEqualTo("order-1");
        assertThat(dl.original().body()).isEqualTo(body);
        assertThat(dl.original().headers()).containsEntry("x-tenant", "acme");
        assertThat(dl.reason()).isEqualTo("gave up after 3 attempts: IllegalStateException: inventory service unavailable");
        assertThat(dl.attempts()).extracting(AttemptRecord::number).containsExactly(1, 2, 3);
        assertThat(dl.attempts()).extracting(AttemptRecord::error)
                .containsOnly("IllegalStateException: inventory service unavailable");
        assertThat(dl.attempts().get(1).at()).isAfter(dl.attempts().get(0).at());
        assertThat(dl.attempts().get(2).at()).isAfter(dl.attempts().get(1).at());
        assertThat(dl.deadLetteredAt()).isAfterOrEqualTo(dl.attempts().get(2).at());

        List<BrokerDeath> deaths = found.brokerDeaths();
        assertThat(deaths).as("x-death").isNotEmpty();
        assertThat(deaths.get(0).queue()).as("the last dead-lettering").isEqualTo(RabbitTopology.holdQueue(queue));
        assertThat(deaths.get(0).reason()).isEqualTo("expired");
        assertThat(deaths.stream().filter(d -> d.queue().startsWith(queue + ".retry.")).mapToLong(BrokerDeath::count).sum())
                .as("trips through the retry buckets").isEqualTo(2);

        assertThat(ready(queue)).as("work queue").isZero();
        assertThat(dlq.depth(queue)).as("inspection consumed nothing").isEqualTo(1);
        List<Alert> alerts = new CopyOnWriteArrayList<>();
        DeadLetterService inspector = new DeadLetterService(dlq, alerts::add, AlertPolicy.defaults(), Clock.system(),
                ProcessedKeys.none(), new RedriveWindow(Duration.ofDays(7)));
        assertThat(inspector.inspect(queue, 10)).extracting(e -> e.deadLetter().originQueue()).containsExactly(queue);
        assertThat(inspector.checkDepth(queue)).isFalse();
        assertThat(alerts).isEmpty();
    }

    @Test
    void elevenDeadLettersRaiseTheAlertAndTenDoNot() {
        String queue = queue("alert");
        alwaysFail(queue);
        RabbitDeadLetterQueue dlq = transport.deadLetterQueue();
        List<Alert> alerts = new CopyOnWriteArrayList<>();
        DeadLetterService inspector = new DeadLetterService(dlq, alerts::add, AlertPolicy.defaults(), Clock.system(),
                ProcessedKeys.none(), new RedriveWindow(Duration.ofDays(7)));

        for (int i = 1; i <= 10; i++) {
            transport.publish(queue, OutgoingMessage.of("fail-" + i, new byte[] {'x'}));
        }
        Eventually.await(PATIENCE, "ten dead letters", () -> dlq.depth(queue) == 10);
        assertThat(inspector.checkDepth(queue)).as("alert at 10").isFalse();
        assertThat(alerts).isEmpty();

        transport.publish(queue, OutgoingMessage.of("fail-11", new byte[] {'x'}));
        Eventually.await(PATIENCE, "eleven dead letters", () -> dlq.depth(queue) == 11);
        assertThat(inspector.checkDepth(queue)).as("alert at 11").isTrue();
        assertThat(alerts).hasSize(1);
        assertThat(alerts.get(0).queue()).isEqualTo(queue);
        assertThat(alerts.get(0).depth()).isEqualTo(11);
        assertThat(alerts.get(0).threshold()).isEqualTo(10);
        assertThat(calls.values()).extracting(AtomicInteger::get).containsOnly(3);
        assertThat(inspector.inspect(queue, 20)).hasSize(11)
                .allSatisfy(e -> assertThat(e.deadLetter().attempts()).hasSize(3));
    }
}
