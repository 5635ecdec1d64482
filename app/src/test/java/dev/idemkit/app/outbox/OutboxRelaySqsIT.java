package dev.idemkit.app.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idemkit.adapters.postgres.PostgresDatabase;
import dev.idemkit.adapters.postgres.PostgresOutbox;
import dev.idemkit.adapters.postgres.PostgresOutboxStore;
import dev.idemkit.adapters.postgres.PostgresSettings;
import dev.idemkit.adapters.sqs.SqsMessageTransport;
import dev.idemkit.adapters.sqs.SqsSettings;
import dev.idemkit.app.TestEnvironment;
import dev.idemkit.app.wiring.EmbeddedEngines;
import dev.idemkit.domain.retry.RandomSource;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.OutboxEvents;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.out.Subscription;
import dev.idemkit.ports.service.OutboxRelay;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The relay onto SQS (the transport {@code serve} runs with nothing configured): to a FIFO queue each row goes out
 * with its ordering key as message group and its id as deduplication id, so the broker keeps each key's order and
 * drops a republish within its window; every committed row arrives once, each key's rows in commit order.
 */
class OutboxRelaySqsIT {

    @Test
    void everyRowReachesAFifoQueueOnceWithEachKeysRowsInCommitOrder() throws Exception {
        String schema = TestEnvironment.unique("app_it_outbox_sqs");
        String queue = "outbox-" + UUID.randomUUID().toString().substring(0, 8) + ".fifo";
        try (EmbeddedEngines engines = new EmbeddedEngines();
                PostgresDatabase db = PostgresDatabase.builder(PostgresSettings.fromEnvironment().withSchema(schema)
                        .withPoolSize(4)).schemaCheck(PostgresDatabase.SchemaCheck.NONE).start();
                // one handler: the SQS subscription hands a received batch to its handlers concurrently, message groups
                // included, so with more the test would observe the consumer's interleaving, not the queue's order
                SqsMessageTransport sqs = new SqsMessageTransport(SqsSettings.local(engines.sqsEndpoint())
                        .withWaitTimeSeconds(1).withMaxConcurrentHandlers(1))) {
            PostgresOutbox outbox = new PostgresOutbox(db);
            PostgresOutboxStore store = new PostgresOutboxStore(db);
            List<String> committed = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                String key = "key-" + (i % 3);
                int n = i;
                committed.add(db.inTransaction(w -> outbox.append(w, OutboxMessage.of(queue, key,
                        (key + "|" + n).getBytes(StandardCharsets.UTF_8)))));
            }
            List<String[]> seen = Collections.synchronizedList(new ArrayList<>());
            try (Subscription sub = sqs.subscribe(queue, d -> {
                        seen.add(new String[] {d.message().rawId(), new String(d.message().body(), StandardCharsets.UTF_8)});
                        d.ack();
                    });
                    OutboxRelay relay = new OutboxRelay(store, sqs, UnaryOperator.identity(), OutboxRelay.Settings
                            .defaults().withPollInterval(Duration.ofMillis(200)), RandomSource.fixed(0.5),
                            Clock.system(), OutboxEvents.none())) {
                relay.start();
                await().atMost(Duration.ofSeconds(60)).until(() -> seen.size() >= committed.size());
                Thread.sleep(1000);
            }
            assertThat(seen).extracting(s -> s[0]).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(committed);
            Map<String, Long> lastSeq = new HashMap<>();
            for (String[] s : List.copyOf(seen)) {
                String key = s[1].substring(0, s[1].indexOf('|'));
                long seq = store.find(s[0]).orElseThrow().row().seq();
                Long before = lastSeq.put(key, seq);
                assertThat(before == null || before < seq).as("key %s: seq %d after %d", key, seq, before).isTrue();
            }
            assertThat(store.stats(Instant.now()).pending()).isZero();
            store.close();
            sqs.deleteQueues(queue);
        } finally {
            TestEnvironment.dropSchema(schema);
        }
    }
}
