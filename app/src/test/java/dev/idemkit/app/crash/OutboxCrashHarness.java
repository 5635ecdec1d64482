package dev.idemkit.app.crash;

import dev.idemkit.testsupport.ChildJvm;
import dev.idemkit.adapters.postgres.JpaUnitOfWork;
import dev.idemkit.adapters.postgres.PostgresDatabase;
import dev.idemkit.adapters.postgres.PostgresInboxStore;
import dev.idemkit.adapters.postgres.PostgresOutbox;
import dev.idemkit.adapters.postgres.PostgresOutboxStore;
import dev.idemkit.adapters.postgres.PostgresSettings;
import dev.idemkit.adapters.rabbit.RabbitMessageTransport;
import dev.idemkit.adapters.rabbit.RabbitSettings;
import dev.idemkit.app.TestEnvironment;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.out.Subscription;
import dev.idemkit.ports.service.ConsumerRuntime;
import dev.idemkit.ports.service.ConsumerSettings;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The crash harness for the outbox relay (docs/ARCHITECTURE.md section 12: "between an outbox publish and its mark"): the shipped
 * relay in a child JVM ({@link OutboxRelayChild}) on the real PostgreSQL outbox and RabbitMQ, SIGKILLed at
 * {@link CrashPoint#OUTBOX_BEFORE_PUBLISH} or {@link CrashPoint#OUTBOX_PUBLISHED_BEFORE_MARK}, restarted, and finally
 * drained by a healthy child. Downstream, in this JVM, the real consumer runtime with the PostgreSQL inbox applies each
 * message's effect (a row per message id). Then the totals: every outbox row marked sent, each row's effect exactly once
 * downstream, and how often the broker delivered a message again with the same id (the republishes the inbox absorbed).
 */
final class OutboxCrashHarness implements AutoCloseable {
    private static final Duration READY = Duration.ofSeconds(60);
    private static final Duration REACH = Duration.ofSeconds(30);
    private static final Duration DRAIN = Duration.ofSeconds(90);
    private static final Duration QUIET = Duration.ofSeconds(3);
    private static final String EFFECTS = "outbox_crash_effects";
    private static final int KEYS = 5;

    /** What one run did and found. */
    record Report(CrashPoint point, String mode, int kills, int rows, int lost, int duplicated, int unsent,
            int redeliveries, List<String> problems) {
        boolean exact() {
            return lost == 0 && duplicated == 0 && unsent == 0 && problems.isEmpty();
        }

        @Override
        public String toString() {
            return "outbox relay " + point + " (" + mode + "): kills=" + kills + " rows=" + rows + " lost=" + lost
                    + " duplicated=" + duplicated + " unsent=" + unsent + " republished-and-absorbed=" + redeliveries
                    + (problems.isEmpty() ? "" : " problems=" + problems);
        }
    }

    private final String tag = UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    private final String schema = TestEnvironment.unique("outbox_crash");
    private final PostgresDatabase db;
    private final PostgresOutbox outbox;
    private final PostgresOutboxStore store;
    private final RabbitMessageTransport transport;
    private final List<String> queues = new ArrayList<>();
    private int runs;

    OutboxCrashHarness() {
        this.db = PostgresDatabase.builder(PostgresSettings.fromEnvironment().withSchema(schema).withPoolSize(6))
                .schemaCheck(PostgresDatabase.SchemaCheck.NONE).start();
        this.outbox = new PostgresOutbox(db);
        this.store = new PostgresOutboxStore(db);
        sql("CREATE TABLE " + EFFECTS + " (n bigserial, consumer text NOT NULL, message_id text NOT NULL)");
        // one consumer: the queue's order is the order of the effects, so the order per key can be checked downstream
        this.transport = new RabbitMessageTransport(RabbitSettings.fromEnvironment().withConsumers(1), Clock.system(),
                "idemkit-it-outbox-crash-" + tag);
    }

    /**
     * One run: rows appended (more between kills), the relay killed {@code kills} times at {@code point} (the first at
     * a random one of the first reachings), then drained by a healthy relay, and counted downstream.
     */
    Report run(CrashPoint point, int kills, long seed, String mode) throws Exception {
        Random random = new Random(seed);
        int run = ++runs;
        String queue = "idemkit-it-outbox-crash-" + tag + "-" + run;
        queues.add(queue);
        String consumer = "outbox-crash-" + tag + "-" + run;
        List<String> problems = new ArrayList<>();
        AtomicInteger duplicates = new AtomicInteger();
        transport.declare(queue);
        ConsumerRuntime<JpaUnitOfWork> downstream = new ConsumerRuntime<>(ConsumerSettings.defaults(consumer),
                new PostgresInboxStore(db), (message, work) -> {
                    try (PreparedStatement ps = work.connection().prepareStatement("INSERT INTO " + EFFECTS
                            + " (consumer, message_id) VALUES (?, ?)")) {
                        ps.setString(1, consumer);
                        ps.setString(2, message.rawId());
                        ps.executeUpdate();
                    }
                }, () -> 0.5, Clock.system(), (c, decision, latency) -> {
                    if (decision == ConsumerEvents.Decision.DUPLICATE) {
                        duplicates.incrementAndGet();
                    }
                });
        List<String> ids = new ArrayList<>();
        Map<String, String> keys = new HashMap<>();
        int made = 0;
        try (Subscription sub = transport.subscribe(queue, downstream)) {
            // the pipelined point needs 3 rows of one key written in a row: a pass's first hand-out is the heads alone, so
            // a key needs a head and 3 more (with 15 rows over 5 keys, 3 each, it was never reached: a .ci/run saw it);
            // the recorded point comes once per ask after a record, a few per 15 rows: both get 30 or more
            boolean fewReachings = point == CrashPoint.OUTBOX_PIPELINE_IN_FLIGHT
                    || point == CrashPoint.OUTBOX_RECORDED_BEFORE_COMMIT;
            int rows = fewReachings ? 30 + random.nextInt(10) : 15 + random.nextInt(10);
            ids.addAll(append(queue, run, rows, keys));
            for (int k = 0; k < kills; k++) {
                // the pipelined point comes only while 3 publishes are unanswered, the recorded one only when an ask
                // follows a record: fewer reachings per run than the others
                int hit = k == 0 ? 1 + random.nextInt(point == CrashPoint.OUTBOX_PIPELINE_IN_FLIGHT
                        || point == CrashPoint.OUTBOX_RECORDED_BEFORE_COMMIT ? 3 : 8) : 1;
                made += killAt(point, hit, mode, run, k, problems) ? 1 : 0;
                ids.addAll(append(queue, run, 5 + random.nextInt(5), keys));
            }
            drain(run, consumer, ids, problems);
        }
        Map<String, Integer> effects = effects(consumer);
        int lost = 0;
        int duplicated = 0;
        for (String id : ids) {
            int n = effects.getOrDefault(id, 0);
            lost += n == 0 ? 1 : 0;
            duplicated += n > 1 ? 1 : 0;
        }
        for (String id : effects.keySet()) {
            if (!ids.contains(id)) {
                problems.add("an effect for " + id + ", which no committed row has");
            }
        }
        if (mode.equals("relay")) {
            problems.addAll(outOfOrder(consumer, ids, keys));
        }
        int unsent = (int) store.stats(Instant.now()).pending() + (int) store.stats(Instant.now()).parked();
        sql("DELETE FROM outbox_messages");
        return new Report(point, mode, made, ids.size(), lost, duplicated, unsent, duplicates.get(), problems);
    }

    private List<String> append(String queue, int run, int n, Map<String, String> keys) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String key = "key-" + (i % KEYS);
            String id = db.inTransaction(w -> outbox.append(w, OutboxMessage.of(queue, key,
                    ("{\"run\":" + run + ",\"key\":\"" + key + "\"}").getBytes(StandardCharsets.UTF_8))));
            ids.add(id);
            keys.put(id, key);
        }
        return ids;
    }

    /**
     * The order per key downstream: each row's first effect, in the order the effects ran, against the order the rows
     * were committed (one at a time here, so append order). Republished copies come after and are absorbed.
     */
    private List<String> outOfOrder(String consumer, List<String> ids, Map<String, String> keys) throws SQLException {
        List<String> firstEffects = new ArrayList<>();
        try (Connection c = db.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT message_id FROM " + EFFECTS + " WHERE consumer = ? GROUP BY message_id ORDER BY min(n)")) {
            ps.setString(1, consumer);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    firstEffects.add(rs.getString(1));
                }
            }
            c.rollback();
        }
        List<String> problems = new ArrayList<>();
        for (String key : new java.util.TreeSet<>(keys.values())) {
            List<String> committed = ids.stream().filter(id -> key.equals(keys.get(id))).toList();
            List<String> applied = firstEffects.stream().filter(id -> key.equals(keys.get(id))).toList();
            if (!applied.equals(committed.subList(0, Math.min(applied.size(), committed.size())))) {
                problems.add("the effects of " + key + " ran out of commit order: " + applied + " for " + committed);
            }
        }
        return problems;
    }

    private boolean killAt(CrashPoint point, int hit, String mode, int run, int k, List<String> problems)
            throws Exception {
        try (ChildJvm child = child(point, hit, mode, run, "kill-" + k)) {
            Optional<String> reached = child.awaitLine("CRASH-POINT", REACH);
            if (reached.isEmpty()) {
                if (k == 0) {
                    // what the child left tells a relay that never ran from one that sent everything below the point
                    problems.add(point + " was never reached (hit " + hit + "; rows still unsent: "
                            + store.stats(Instant.now()).pending() + "; child alive: " + child.alive() + "); log "
                            + child.log());
                }
                child.terminate();
                return false;
            }
            int status = child.kill();
            if (status != ChildJvm.SIGKILLED) {
                problems.add("kill " + k + " ended with status " + status + ", not SIGKILL's " + ChildJvm.SIGKILLED);
            }
            return true;
        }
    }

    /** A healthy relay until every row is sent and every id has its effect downstream (or the bound runs out). */
    private void drain(int run, String consumer, List<String> ids, List<String> problems) throws Exception {
        try (ChildJvm child = child(null, 0, "relay", run, "drain")) {
            if (child.awaitLine("READY", READY).isEmpty()) {
                problems.add("the draining relay did not start; log " + child.log());
                return;
            }
            long deadline = System.nanoTime() + DRAIN.toNanos();
            long quietSince = System.nanoTime();
            int last = -1;
            while (System.nanoTime() < deadline) {
                var stats = store.stats(Instant.now());
                Map<String, Integer> effects = effects(consumer);
                if (stats.pending() == 0 && stats.parked() == 0 && effects.keySet().containsAll(ids)) {
                    break;
                }
                if (effects.size() != last || stats.pending() > 0) {
                    last = effects.size();
                    quietSince = System.nanoTime();
                } else if (System.nanoTime() - quietSince > QUIET.toNanos()) {
                    break; // everything is marked sent and nothing more arrives: what is missing is lost
                }
                Thread.sleep(100);
            }
            Thread.sleep(300); // a republish still in flight arrives and is counted
            child.terminate();
        }
    }

    private ChildJvm child(CrashPoint point, int hit, String mode, int run, String name) throws java.io.IOException {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("idemkit.crash.schema", schema);
        p.put("idemkit.crash.mode", mode);
        p.put("idemkit.crash.point", point == null ? "NONE" : point.name());
        p.put("idemkit.crash.hit", Integer.toString(hit));
        // the pipelined point runs several rows of a key in flight (the others, and the draining relay, the default 1)
        p.put("idemkit.crash.keyWindow", point == CrashPoint.OUTBOX_PIPELINE_IN_FLIGHT ? "4" : "1");
        // hand-outs of 4 (a pass asks for more several times while it publishes), but of 20 for the pipelined point,
        // which needs 3 rows of one key in a run (with 4, a key gets about one row per hand-out: 12 of 20 kills landed)
        p.put("idemkit.crash.batch", point == CrashPoint.OUTBOX_PIPELINE_IN_FLIGHT ? "20" : "4");
        p.put("idemkit.crash.connection", "idemkit-it-outbox-crash-" + tag + "-" + run);
        return CrashJvms.start(OutboxRelayChild.class.getName(), p, Map.of(),
                "outbox-" + (point == null ? "none" : point) + "-" + tag + "-" + run + "-" + name);
    }

    private Map<String, Integer> effects(String consumer) throws SQLException {
        Map<String, Integer> out = new HashMap<>();
        try (Connection c = db.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT message_id, count(*) FROM " + EFFECTS + " WHERE consumer = ? GROUP BY message_id")) {
            ps.setString(1, consumer);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(1), rs.getInt(2));
                }
            }
            c.rollback();
        }
        return out;
    }

    private void sql(String statement) {
        try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute(statement);
            c.commit();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() throws Exception {
        for (String q : queues) {
            try {
                transport.deleteTopology(q);
            } catch (RuntimeException ignored) {
                // best effort
            }
        }
        transport.close();
        store.close();
        db.close();
        TestEnvironment.dropSchema(schema);
    }
}
