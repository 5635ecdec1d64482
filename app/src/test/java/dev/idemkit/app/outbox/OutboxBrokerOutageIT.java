package dev.idemkit.app.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import dev.idemkit.adapters.postgres.PostgresDatabase;
import dev.idemkit.adapters.postgres.PostgresOutbox;
import dev.idemkit.adapters.postgres.PostgresOutboxStore;
import dev.idemkit.adapters.postgres.PostgresSettings;
import dev.idemkit.adapters.rabbit.RabbitMessageTransport;
import dev.idemkit.adapters.rabbit.RabbitSettings;
import dev.idemkit.app.TestEnvironment;
import dev.idemkit.testsupport.RabbitCluster;
import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.FailureClassifier;
import dev.idemkit.domain.retry.Jitter;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.OutboxEvents;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.service.OutboxRelay;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The broker down mid-stream for {@code idemkit.outbox.outageSeconds} (3 s in the full tier, 10 s with the command in app/README.md), for real: a private single-node RabbitMQ (its own ports
 * and data dir; the machine's broker is untouched) is SIGKILLed while producers keep committing outbox rows and the
 * relay keeps trying, then started again. Rows accumulate while it is down, then drain: every committed row reaches
 * the (quorum, durable) queue, each key's first deliveries in seq (commit) order, and a row delivered twice is the
 * same id twice (a publish whose confirm died with the broker), which a consumer's inbox absorbs.
 */
@Tag("slow") // full tier: an outage suite on a private broker; OutboxCrashIT kills the relay at each of its points
class OutboxBrokerOutageIT {
    /** 3 s in the full tier ({@code -Pfull}); app/README.md's command runs it with {@code -Didemkit.outbox.outageSeconds=10}. */
    private static final int OUTAGE_SECONDS = Integer.getInteger("idemkit.outbox.outageSeconds", 3);

    @Test
    void rowsAccumulateWhileTheBrokerIsDownThenDrainInOrderWithNothingLost() throws Exception {
        Assumptions.assumeTrue(RabbitCluster.available(), "no rabbitmq-server scripts on this machine");
        String schema = TestEnvironment.unique("app_it_outage");
        String queue = "idemkit-it-outbox-outage";
        try (RabbitCluster broker = RabbitCluster.start(1);
                PostgresDatabase db = PostgresDatabase.builder(PostgresSettings.fromEnvironment().withSchema(schema)
                        .withPoolSize(6)).schemaCheck(PostgresDatabase.SchemaCheck.NONE).start()) {
            RabbitSettings rabbit = RabbitSettings.fromEnvironment(Map.of("IDEMKIT_RABBIT_URI", broker.uri(1)))
                    .withConfirmTimeout(Duration.ofSeconds(2));
            PostgresOutbox outbox = new PostgresOutbox(db);
            PostgresOutboxStore store = new PostgresOutboxStore(db);
            List<String> committed = new ArrayList<>();
            long pendingDuringOutage;
            Random random = new Random(11);
            RetryPolicy patient = new RetryPolicy(1000, Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(1),
                    Jitter.FULL), FailureClassifier.defaults());
            try (RabbitMessageTransport transport = new RabbitMessageTransport(rabbit, Clock.system(), "idemkit-it-outage");
                    OutboxRelay relay = new OutboxRelay(store, transport, UnaryOperator.identity(), OutboxRelay.Settings
                            .defaults().withRetryPolicy(patient).withPollInterval(Duration.ofMillis(200)), () -> {
                                synchronized (random) {
                                    return random.nextDouble();
                                }
                            }, Clock.system(), OutboxEvents.none())) {
                transport.declare(queue);
                relay.start();
                AtomicBoolean producing = new AtomicBoolean(true);
                Thread producer = new Thread(() -> {
                    int i = 0;
                    while (producing.get()) {
                        String key = "key-" + (i % 6);
                        int n = i++;
                        committed.add(db.inTransaction(w -> outbox.append(w, OutboxMessage.of(queue, key,
                                (key + "|" + n).getBytes(StandardCharsets.UTF_8)))));
                        try {
                            Thread.sleep(20);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }, "outage-producer");
                producer.start();
                Thread.sleep(2000);
                broker.kill9(1);
                Thread.sleep(OUTAGE_SECONDS * 1000L);
                pendingDuringOutage = store.stats(Instant.now()).pending();
                broker.restart(1);
                Thread.sleep(2000);
                producing.set(false);
                producer.join();
                await().atMost(Duration.ofSeconds(90)).until(() -> store.stats(Instant.now()).pending() == 0);
            }
            // about 45 appends a second here; a slower machine commits fewer, but never none while the broker is down
            assertThat(pendingDuringOutage).as("rows accumulate while the broker is down").isGreaterThanOrEqualTo(5L * OUTAGE_SECONDS);

            List<String> delivered = new ArrayList<>();
            Map<String, String> keyOf = new HashMap<>();
            ConnectionFactory f = new ConnectionFactory();
            f.setUri(broker.uri(1));
            try (Connection c = f.newConnection("idemkit-it-outage-reader"); Channel ch = c.createChannel()) {
                for (GetResponse r; (r = ch.basicGet(queue, true)) != null; ) {
                    String body = new String(r.getBody(), StandardCharsets.UTF_8);
                    delivered.add(r.getProps().getMessageId());
                    keyOf.put(r.getProps().getMessageId(), body.substring(0, body.indexOf('|')));
                }
            }
            assertThat(new HashSet<>(delivered)).as("nothing lost").containsAll(committed);
            assertThat(new HashSet<>(delivered)).as("nothing that was not committed").hasSameSizeAs(committed);
            Map<String, Long> lastSeq = new HashMap<>();
            Set<String> firstSeen = new HashSet<>();
            for (String id : delivered) {
                if (!firstSeen.add(id)) {
                    continue; // a republish of a row whose confirm died with the broker: same id, absorbed downstream
                }
                long seq = store.find(id).orElseThrow().row().seq();
                Long before = lastSeq.put(keyOf.get(id), seq);
                assertThat(before == null || before < seq).as("key %s: seq %d first seen after %d", keyOf.get(id), seq,
                        before).isTrue();
            }
            System.out.println("outbox-outage: " + OUTAGE_SECONDS + " s down, committed=" + committed.size() + " pending-during-outage="
                    + pendingDuringOutage + " delivered=" + delivered.size() + " (republished "
                    + (delivered.size() - committed.size()) + ")");
            store.close();
        } finally {
            TestEnvironment.dropSchema(schema);
        }
    }
}
