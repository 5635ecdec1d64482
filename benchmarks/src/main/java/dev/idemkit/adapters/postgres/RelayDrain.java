package dev.idemkit.adapters.postgres;

import dev.idemkit.benchmarks.CpuMeter;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutboxEvents;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.out.OutboxStore;
import dev.idemkit.ports.service.OutboxRelay;
import java.sql.PreparedStatement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * One relay throughput measurement, the same on every transport: {@code rows} rows committed in the outbox over
 * {@code keys} ordering keys, then drained by the shipped {@link OutboxRelay} (its loops, as serve runs them) through
 * {@link PostgresOutboxStore} and the given transport. Timed from the relay's start until it has counted every row
 * recorded as sent (polling the table for what is pending would add its own load on PostgreSQL to what is measured);
 * the table is then checked empty of unsent rows. Used by {@link OutboxBenchmark} (RabbitMQ) and the SQS benchmark.
 */
public final class RelayDrain {
    private static final byte[] BODY = "{\"account_id\":\"acc-1\",\"amount\":1.00,\"currency\":\"BRL\"}"
            .getBytes(java.nio.charset.StandardCharsets.UTF_8);
    private static final CpuMeter CPU = new CpuMeter();

    private final PostgresDatabase db;
    private final PostgresOutbox outbox;

    /** What a drain measured: its rate, the CPU spent during it, its passes and their share spent publishing. */
    public record Result(double rate, CpuMeter.Spent cpu, long passes, double publishingShare) {}

    public RelayDrain(PostgresDatabase db) {
        this.db = db;
        this.outbox = new PostgresOutbox(db);
    }

    /** Runs {@code body} with a drain on a fresh test schema (the test migrations), dropped afterwards. */
    public static <T> T onTestDatabase(Function<RelayDrain, T> body) {
        try (TestDatabase pg = TestDatabase.start(12)) {
            return body.apply(new RelayDrain(pg.db()));
        }
    }

    public Result drain(MessageTransport transport, String queue, int rows, int keys, OutboxRelay.Settings settings)
            throws InterruptedException {
        for (int done = 0; done < rows; done += 500) {
            int from = done;
            db.inTransaction(w -> {
                List<OutboxMessage> batch = new ArrayList<>();
                for (int i = from; i < Math.min(rows, from + 500); i++) {
                    batch.add(OutboxMessage.of(queue, "key-" + (i % keys), BODY));
                }
                return outbox.appendAll(w, batch);
            });
        }
        PostgresOutboxStore store = new PostgresOutboxStore(db);
        Timed timed = new Timed(store);
        Semaphore sent = new Semaphore(0);
        try (OutboxRelay relay = relay(timed, transport, settings, sent)) {
            long t0 = System.nanoTime();
            CpuMeter.Reading cpu0 = CPU.read();
            relay.start();
            if (!sent.tryAcquire(rows, 300, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the relay sent " + sent.availablePermits() + " of " + rows + " in 300 s");
            }
            double rate = rows / ((System.nanoTime() - t0) / 1e9);
            CpuMeter.Spent cpu = CPU.read().since(cpu0, rows);
            if (store.stats(Instant.now()).pending() != 0) {
                throw new IllegalStateException("rows left unsent after the relay counted every row sent");
            }
            return new Result(rate, cpu, timed.passes.get(), (double) timed.publishing.get() / Math.max(1, timed.total.get()));
        } finally {
            store.close();
            db.inTransaction(w -> {
                try (PreparedStatement ps = w.connection().prepareStatement("DELETE FROM outbox_messages")) {
                    return ps.executeUpdate();
                }
            });
        }
    }

    private static OutboxRelay relay(OutboxStore store, MessageTransport transport, OutboxRelay.Settings settings,
            Semaphore sent) {
        SplittableRandom random = new SplittableRandom();
        return new OutboxRelay(store, transport, UnaryOperator.identity(), settings, () -> {
            synchronized (random) {
                return random.nextDouble();
            }
        }, Clock.system(), new OutboxEvents() {
            @Override
            public void published(int n) {
                sent.release(n);
            }

            @Override
            public void failed() {}

            @Override
            public void parked() {}
        });
    }

    /** The shipped store, timing each pass and the part of it spent publishing (inside the relay's publisher). */
    private static final class Timed extends dev.idemkit.ports.forwarding.ForwardingOutboxStore {
        final AtomicLong total = new AtomicLong();
        final AtomicLong publishing = new AtomicLong();
        final AtomicLong passes = new AtomicLong();

        Timed(OutboxStore store) {
            super(store);
        }

        @Override
        public int relay(int first, int max, Instant now, StreamingPublisher publisher) {
            long t0 = System.nanoTime();
            int n = delegate().relay(first, max, now, (runs, pass) -> {
                long p0 = System.nanoTime();
                try {
                    publisher.publish(runs, pass);
                } finally {
                    publishing.addAndGet(System.nanoTime() - p0);
                }
            });
            if (n > 0) {
                total.addAndGet(System.nanoTime() - t0);
                passes.incrementAndGet();
            }
            return n;
        }
    }
}
