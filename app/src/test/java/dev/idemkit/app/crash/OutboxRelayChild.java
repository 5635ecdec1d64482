package dev.idemkit.app.crash;

import dev.idemkit.adapters.postgres.PostgresDatabase;
import dev.idemkit.adapters.postgres.PostgresOutboxStore;
import dev.idemkit.adapters.postgres.PostgresSettings;
import dev.idemkit.adapters.rabbit.RabbitMessageTransport;
import dev.idemkit.adapters.rabbit.RabbitSettings;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.forwarding.ForwardingOutboxStore;
import dev.idemkit.ports.out.OutboxEvents;
import dev.idemkit.ports.out.OutboxRow;
import dev.idemkit.ports.out.OutboxStore;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.RelayOutcome;
import dev.idemkit.ports.out.Subscription;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.service.OutboxRelay;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.function.UnaryOperator;

/**
 * The outbox relay in a JVM of its own, for {@link OutboxCrashIT}: the shipped {@link OutboxRelay} on the real
 * PostgreSQL outbox ({@code idemkit.crash.schema}) and RabbitMQ, publishing through the real transport, which is wrapped
 * (through the port) so that {@link CrashProbe} stops a publishing thread right before a publish, right after its
 * confirm, or with several publishes in flight, for the harness's SIGKILL. Mode {@code broken-mark-first} is a deliberately broken relay that marks its rows
 * sent BEFORE it publishes them, which the harness must catch. Prints {@code READY}, runs until SIGTERM.
 */
public final class OutboxRelayChild {
    private OutboxRelayChild() {}

    public static void main(String[] args) throws Exception {
        String schema = System.getProperty("idemkit.crash.schema");
        String mode = System.getProperty("idemkit.crash.mode", "relay");
        PostgresDatabase db = PostgresDatabase.builder(PostgresSettings.fromEnvironment().withSchema(schema)
                .withPoolSize(4)).schemaCheck(PostgresDatabase.SchemaCheck.NONE).start();
        RabbitMessageTransport rabbit = new RabbitMessageTransport(RabbitSettings.fromEnvironment(), Clock.system(),
                System.getProperty("idemkit.crash.connection", "idemkit-it-outbox-crash"));
        PostgresOutboxStore store = new PostgresOutboxStore(db);
        OutboxStore relayed = mode.equals("broken-mark-first") ? new MarkFirst(store) : new RecordProbed(store);
        SplittableRandom random = new SplittableRandom();
        // through the tracing decorator, as serve wires its relay (Assembly.outboxRelay, no tracing configured)
        OutboxRelay relay = new OutboxRelay(relayed, new Probed(dev.idemkit.app.tracing.Tracing.none().publishing(rabbit)),
                UnaryOperator.identity(),
                // hand-outs of idemkit.crash.batch: a pass asks for more while it publishes (docs/ARCHITECTURE.md s.9)
                OutboxRelay.Settings.defaults().withBatch(Integer.getInteger("idemkit.crash.batch", 4)).withParallelism(4)
                        .withPollInterval(Duration.ofMillis(200))
                        .withKeyWindow(Integer.getInteger("idemkit.crash.keyWindow", 1))
                        .withRetryPolicy(RetryPolicy.defaults().withMaxAttempts(50)), () -> {
                    synchronized (random) {
                        return random.nextDouble();
                    }
                }, Clock.system(), OutboxEvents.none());
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stop.countDown();
            try {
                closed.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "outbox-child-shutdown"));
        try {
            relay.start();
            System.out.println("READY");
            System.out.flush();
            stop.await();
        } finally {
            relay.close();
            store.close();
            rabbit.close();
            db.close();
            closed.countDown();
        }
    }

    /**
     * The real transport, with the relay's crash points around each publish: before it is written, once its confirm
     * came (the connection's thread stops there), and at the {@link #IN_A_ROW}th row of one ordering key written in a
     * row, with no confirm awaited between them (key window 4; the relay's writing thread stops there): several rows of
     * the key written, some maybe confirmed, none recorded. Counting unanswered publishes instead raced the broker: a
     * child whose confirms came back faster than it wrote never reached the point (2 runs in 6 with OutboxCrashSlowIT
     * beside it).
     */
    private static final class Probed implements MessageTransport {
        static final int IN_A_ROW = 3;
        private final MessageTransport transport;
        private String lastGroup;
        private int inARow;

        Probed(MessageTransport transport) {
            this.transport = transport;
        }

        @Override
        public Subscription subscribe(String queue, DeliveryHandler handler) {
            return transport.subscribe(queue, handler);
        }

        @Override
        public void publish(String queue, OutgoingMessage message) {
            throw new AssertionError("the relay publishes through publishAsync");
        }

        @Override
        public CompletableFuture<Void> publishAsync(String queue, OutgoingMessage message) {
            CrashProbe.reached(CrashPoint.OUTBOX_BEFORE_PUBLISH);
            CompletableFuture<Void> confirm = transport.publishAsync(queue, message).whenComplete((ok, e) -> {
                if (e == null) {
                    CrashProbe.reached(CrashPoint.OUTBOX_PUBLISHED_BEFORE_MARK);
                }
            });
            String group = message.groupId().orElse("");
            boolean pipelined;
            synchronized (this) { // the relay's pass thread writes; the lock only keeps the count honest
                inARow = group.equals(lastGroup) ? inARow + 1 : 1;
                lastGroup = group;
                pipelined = inARow >= IN_A_ROW;
            }
            if (pipelined) {
                CrashProbe.reached(CrashPoint.OUTBOX_PIPELINE_IN_FLIGHT);
            }
            return confirm;
        }

        @Override
        public void close() {
            transport.close();
        }
    }

    /**
     * The shipped store, with the point where a pass that goes on has written outcomes in its transaction and is handed
     * more rows (the store runs a pass's asks and records in call order, so an answer after a record comes after it
     * was written).
     */
    private static final class RecordProbed extends ForwardingOutboxStore {
        RecordProbed(OutboxStore store) {
            super(store);
        }

        @Override
        public int relay(int first, int max, Instant now, StreamingPublisher publisher) {
            return delegate().relay(first, max, now, (runs, pass) -> publisher.publish(runs, new Pass() {
                private boolean recorded;

                @Override
                public void more(java.util.Collection<String> keys, int rows,
                        java.util.function.BiConsumer<List<List<OutboxRow>>, Throwable> answer) {
                    boolean afterRecord = recorded;
                    pass.more(keys, rows, (more, e) -> {
                        if (afterRecord && e == null && !more.isEmpty()) {
                            CrashProbe.reached(CrashPoint.OUTBOX_RECORDED_BEFORE_COMMIT);
                        }
                        answer.accept(more, e);
                    });
                }

                @Override
                public void record(Map<String, RelayOutcome> outcomes) {
                    pass.record(outcomes);
                    recorded = true;
                }
            }));
        }
    }

    /** Broken on purpose: records every handed-out row as sent and commits, THEN publishes them. */
    private static final class MarkFirst extends ForwardingOutboxStore {
        MarkFirst(OutboxStore store) {
            super(store);
        }

        @Override
        @SuppressWarnings("unchecked")
        public int relay(int first, int max, Instant now, StreamingPublisher publisher) {
            List<List<OutboxRow>>[] held = new List[1];
            // one batch of the pass's whole bound: several rows of a key in it, as the pipelined point needs
            int n = delegate().relay(max, now, runs -> {
                held[0] = runs;
                Map<String, RelayOutcome> sent = new HashMap<>();
                runs.forEach(run -> run.forEach(r -> sent.put(r.id(), new RelayOutcome.Sent(now))));
                return sent;
            });
            if (n > 0) {
                publisher.publish(held[0], new Pass() {
                    @Override
                    public void more(java.util.Collection<String> keys, int rows,
                            java.util.function.BiConsumer<List<List<OutboxRow>>, Throwable> answer) {
                        answer.accept(List.of(), null);
                    }

                    @Override
                    public void record(Map<String, RelayOutcome> outcomes) {} // already marked sent, and committed
                });
            }
            return n;
        }
    }
}
