package dev.idemkit.app.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.idemkit.adapters.postgres.PostgresDatabase;
import dev.idemkit.adapters.postgres.PostgresOutbox;
import dev.idemkit.adapters.postgres.PostgresOutboxStore;
import dev.idemkit.adapters.postgres.PostgresSettings;
import dev.idemkit.adapters.rabbit.RabbitMessageTransport;
import dev.idemkit.adapters.rabbit.RabbitSettings;
import dev.idemkit.app.TestEnvironment;
import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.FailureClassifier;
import dev.idemkit.domain.retry.Jitter;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.OutboxEntry;
import dev.idemkit.ports.out.OutboxEvents;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.service.OutboxRelay;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The relay as {@code serve} runs it, on the real PostgreSQL and RabbitMQ: two relays share one outbox table while 16
 * producers commit; a plain AMQP consumer on the destination queue sees every committed row exactly once (there is no
 * crash here, so no republish) and each key's rows in seq (commit) order. A row the broker refuses is parked with its
 * reason while the other keys keep flowing, and the row behind it in its key waits.
 */
class OutboxRelayIT {
    private static final String TAG = UUID.randomUUID().toString().substring(0, 8);
    private static String schema;
    private static PostgresDatabase db;
    private static PostgresOutbox outbox;
    private static RabbitMessageTransport transport;
    private static Connection amqp;
    private static final List<String> queues = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        schema = TestEnvironment.unique("app_it_outbox");
        db = PostgresDatabase.builder(PostgresSettings.fromEnvironment().withSchema(schema).withPoolSize(24))
                .schemaCheck(PostgresDatabase.SchemaCheck.NONE).start();
        outbox = new PostgresOutbox(db);
        transport = new RabbitMessageTransport(RabbitSettings.fromEnvironment(), Clock.system(), "idemkit-it-outbox-" + TAG);
        ConnectionFactory f = new ConnectionFactory();
        f.setUri(RabbitSettings.fromEnvironment().uri());
        amqp = f.newConnection("idemkit-it-outbox-reader-" + TAG);
    }

    @AfterAll
    static void stop() throws Exception {
        queues.forEach(q -> {
            try {
                transport.deleteTopology(q);
            } catch (RuntimeException ignored) {
                // best effort
            }
        });
        if (amqp != null) {
            amqp.close();
        }
        if (transport != null) {
            transport.close();
        }
        if (db != null) {
            db.close();
        }
        TestEnvironment.dropSchema(schema);
    }

    static OutboxRelay relay(PostgresOutboxStore store, int attempts) {
        RetryPolicy policy = new RetryPolicy(attempts, Backoff.exponential(Duration.ofMillis(20), Duration.ofMillis(100),
                Jitter.FULL), FailureClassifier.defaults());
        Random random = new Random(7);
        return new OutboxRelay(store, transport, UnaryOperator.identity(), OutboxRelay.Settings.defaults()
                .withRetryPolicy(policy).withPollInterval(Duration.ofMillis(200)).withBatch(50), () -> {
                    synchronized (random) {
                        return random.nextDouble();
                    }
                }, Clock.system(), OutboxEvents.none());
    }

    /** Deliveries of a queue, in the order the queue hands them out: message id and body. */
    record Seen(String id, String body) {}

    static List<Seen> consume(String queue) throws Exception {
        transport.declare(queue);
        List<Seen> seen = Collections.synchronizedList(new ArrayList<>());
        Channel ch = amqp.createChannel();
        ch.basicQos(500);
        ch.basicConsume(queue, false, (tag, d) -> {
            seen.add(new Seen(d.getProperties().getMessageId(), new String(d.getBody(), StandardCharsets.UTF_8)));
            ch.basicAck(d.getEnvelope().getDeliveryTag(), false);
        }, tag -> { });
        return seen;
    }

    @Test
    void twoRelaysPublishEveryCommittedRowOnceAndEachKeyInCommitOrderWhile16ProducersCommit() throws Exception {
        String queue = "idemkit-it-outbox-" + TAG + "-order";
        queues.add(queue);
        List<Seen> seen = consume(queue);
        PostgresOutboxStore store1 = new PostgresOutboxStore(db);
        PostgresOutboxStore store2 = new PostgresOutboxStore(db);
        List<String> committed = Collections.synchronizedList(new ArrayList<>());
        try (OutboxRelay r1 = relay(store1, 5); OutboxRelay r2 = relay(store2, 5)) {
            r1.start();
            r2.start();
            ExecutorService producers = Executors.newFixedThreadPool(16);
            List<Future<?>> done = new ArrayList<>();
            for (int p = 0; p < 16; p++) {
                int producer = p;
                done.add(producers.submit(() -> {
                    Random random = new Random(producer);
                    for (int t = 0; t < 15; t++) {
                        String key = "key-" + random.nextInt(6);
                        int n = 1 + random.nextInt(2);
                        List<String> ids = db.inTransaction(work -> {
                            List<String> out = new ArrayList<>();
                            for (int i = 0; i < n; i++) {
                                out.add(outbox.append(work, OutboxMessage.of(queue, key,
                                        (key + "|" + producer + "|" + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8))));
                                Thread.sleep(random.nextInt(3));
                            }
                            return out;
                        });
                        committed.addAll(ids);
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
            producers.shutdown();
            await().atMost(Duration.ofSeconds(60)).until(() -> seen.size() >= committed.size());
            Thread.sleep(500); // anything published twice would arrive by now
        } finally {
            store1.close();
            store2.close();
        }

        assertThat(seen).extracting(Seen::id).as("every committed row exactly once: no crash, no republish")
                .doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(committed);
        Map<String, Long> lastSeq = new HashMap<>();
        PostgresOutboxStore reader = new PostgresOutboxStore(db);
        for (Seen s : List.copyOf(seen)) {
            String key = s.body().substring(0, s.body().indexOf('|'));
            long seq = reader.find(s.id()).orElseThrow().row().seq();
            Long before = lastSeq.put(key, seq);
            assertThat(before == null || before < seq).as("key %s: seq %d arrived after %d", key, seq, before).isTrue();
        }
        assertThat(reader.stats(java.time.Instant.now()).pending()).isZero();
    }

    @Test
    void aRowTheBrokerRefusesIsParkedWithItsReasonItsKeyWaitsAndOtherKeysFlow() throws Exception {
        String queue = "idemkit-it-outbox-" + TAG + "-poison";
        queues.add(queue);
        List<Seen> seen = consume(queue);
        String refused = "é".repeat(200); // 400 bytes: AMQP names are at most 255
        String poison = db.inTransaction(w -> outbox.append(w, OutboxMessage.of(refused, "poisoned", "p1".getBytes(StandardCharsets.UTF_8))));
        String behind = db.inTransaction(w -> outbox.append(w, OutboxMessage.of(queue, "poisoned", "p2".getBytes(StandardCharsets.UTF_8))));
        List<String> others = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            int n = i;
            others.add(db.inTransaction(w -> outbox.append(w, OutboxMessage.of(queue, "healthy-" + (n % 3),
                    ("h" + n).getBytes(StandardCharsets.UTF_8)))));
        }
        PostgresOutboxStore store = new PostgresOutboxStore(db);
        try (OutboxRelay relay = relay(store, 3)) {
            relay.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> seen.size() >= others.size()
                    && store.find(poison).map(e -> e.state() == OutboxEntry.State.PARKED).orElse(false));
            Thread.sleep(500);
        }
        OutboxEntry parked = store.find(poison).orElseThrow();
        assertThat(parked.parkReason()).hasValueSatisfying(r -> assertThat(r).isNotBlank());
        assertThat(parked.row().failures()).isNotEmpty();
        assertThat(store.parked(10)).extracting(e -> e.row().id()).containsExactly(poison);
        assertThat(seen).extracting(Seen::id).containsExactlyInAnyOrderElementsOf(others);
        assertThat(store.find(behind).orElseThrow().state()).as("a parked row blocks its key")
                .isEqualTo(OutboxEntry.State.PENDING);
        store.close();
    }
}
