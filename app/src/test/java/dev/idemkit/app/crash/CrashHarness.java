package dev.idemkit.app.crash;

import dev.idemkit.testsupport.ChildJvm;
import dev.idemkit.testsupport.TestPostgres;
import dev.idemkit.testsupport.TestRabbit;
import dev.idemkit.adapters.postgres.PostgresDatabase;
import dev.idemkit.adapters.postgres.PostgresSettings;
import dev.idemkit.adapters.kafka.KafkaBroker;
import dev.idemkit.adapters.kafka.KafkaMessageTransport;
import dev.idemkit.adapters.kafka.KafkaSettings;
import dev.idemkit.adapters.rabbit.RabbitMessageTransport;
import dev.idemkit.adapters.rabbit.RabbitSettings;
import dev.idemkit.adapters.redis.RedisSettings;
import dev.idemkit.adapters.sqs.SqsMessageTransport;
import dev.idemkit.adapters.sqs.SqsSettings;
import dev.idemkit.app.TestEnvironment;
import dev.idemkit.app.wiring.EmbeddedEngines;
import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.DeadLetterEntry;
import dev.idemkit.ports.out.DeadLetterQueue;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutgoingMessage;
import java.io.IOException;
import java.net.URI;
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
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * The crash harness (docs/ARCHITECTURE.md section 12): the real consumer in a child JVM ({@link CrashChild}) on a real store and
 * a real transport, SIGKILLed at a named {@link CrashPoint}, restarted and drained; then the totals: every message's
 * effect exactly once, nothing left in the work or retry queues, every poisoned message in the DLQ (or, after a
 * redrive, processed once).
 *
 * <p>One harness per {@link Combination}: its own PostgreSQL schema or Redis key prefix, and for SQS an ElasticMQ
 * server in this JVM (the child reaches it over HTTP, so killing the child leaves it running). Every run has fresh
 * queue, consumer and message names. Everything is removed on close.
 */
final class CrashHarness implements AutoCloseable {
    private static final Duration READY = Duration.ofSeconds(60);
    private static final Duration REACH = Duration.ofSeconds(30);
    /** Healthy children a drain may take, each stopped once the queue looks empty (see {@link #drain}). */
    private static final int DRAIN_ROUNDS = 4;
    /** How long the drained state must hold before a drain's child is stopped. */
    private static final Duration SETTLED = Duration.ofMillis(500);
    private static final Duration DRAIN = Duration.ofSeconds(90);
    private static final Duration QUIET = Duration.ofSeconds(5);
    private static final int PLAIN = 8;
    private static final int RETRIED = 2;
    private static final int POISONED = 2;

    /** What one run did and found. */
    record Report(Combination combination, CrashPoint point, String mode, int kills, int messages, int lost,
            int duplicated, int unsettled, int deadLetters, List<String> problems) {
        boolean exact() {
            return lost == 0 && duplicated == 0 && unsettled == 0 && problems.isEmpty();
        }

        @Override
        public String toString() {
            return combination + " " + (point == null ? "" : point + " ") + "(" + mode + "): kills=" + kills + " messages=" + messages + " lost="
                    + lost + " duplicated=" + duplicated + " unsettled=" + unsettled + " dead letters=" + deadLetters
                    + (problems.isEmpty() ? "" : " problems=" + problems);
        }
    }

    private final Combination combination;
    private final EmbeddedEngines engines = new EmbeddedEngines();
    private final String tag = UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    private final MessageTransport transport;
    private final DeadLetterQueue dlq;
    private final URI sqsEndpoint;
    private final String schema;
    private final PostgresDatabase db;
    private final String redisPrefix;
    private final RedissonClient redis;
    private final com.rabbitmq.client.Connection amqp;
    private final SqsCounts sqs;
    private final KafkaCounts kafka;
    private final List<String> queues = new ArrayList<>();
    private final Map<String, String> childEnv;
    private int runs;

    CrashHarness(Combination combination) {
        this(combination, Map.of());
    }

    /** With {@code childEnv} added to the children's environment (e.g. another {@code IDEMKIT_REDIS_URL}). */
    CrashHarness(Combination combination, Map<String, String> childEnv) {
        this.combination = combination;
        this.childEnv = Map.copyOf(childEnv);
        if (combination.store == Combination.Store.POSTGRES) {
            this.schema = TestEnvironment.unique("crash");
            this.db = PostgresDatabase.builder(PostgresSettings.fromEnvironment().withSchema(schema).withPoolSize(2))
                    .schemaCheck(PostgresDatabase.SchemaCheck.NONE).start();
            sql("CREATE TABLE " + CrashChild.EFFECTS_TABLE + " (consumer text NOT NULL, message_id text NOT NULL,"
                    + " at timestamptz NOT NULL DEFAULT clock_timestamp())");
            sql("CREATE TABLE " + CrashChild.POISON_TABLE + " (message_id text PRIMARY KEY)");
            this.redisPrefix = null;
            this.redis = null;
        } else {
            this.schema = null;
            this.db = null;
            this.redisPrefix = "it-crash-" + tag;
            Map<String, String> env = new HashMap<>(System.getenv());
            env.putAll(childEnv);
            Config config = new Config();
            config.useSingleServer().setAddress(RedisSettings.fromEnvironment(env).addresses().get(0));
            this.redis = Redisson.create(config);
        }
        if (combination.transport == Combination.Transport.KAFKA) {
            KafkaSettings kafka = KafkaBroker.shared().settings().withConsumption(combination.share
                    ? KafkaSettings.Consumption.SHARE : KafkaSettings.Consumption.GROUP);
            KafkaMessageTransport k = new KafkaMessageTransport(kafka);
            this.transport = k;
            this.dlq = k.deadLetters();
            this.sqsEndpoint = null;
            this.sqs = null;
            this.amqp = null;
            this.kafka = new KafkaCounts(kafka);
        } else if (combination.transport == Combination.Transport.RABBIT) {
            this.kafka = null;
            Map<String, String> env = new HashMap<>(System.getenv());
            env.putAll(childEnv); // the children's queue settings (type, delivery limit), or the declarations differ
            RabbitMessageTransport rabbit = new RabbitMessageTransport(RabbitSettings.fromEnvironment(env)
                    .withMaxAttemptsHint(5), Clock.system(), "idemkit-it-crash-harness-" + tag);
            this.transport = rabbit;
            this.dlq = rabbit.deadLetterQueue();
            this.sqsEndpoint = null;
            this.sqs = null;
            try {
                ConnectionFactory f = new ConnectionFactory();
                f.setUri(RabbitSettings.fromEnvironment().uri());
                this.amqp = f.newConnection("idemkit-it-crash-counts-" + tag);
            } catch (Exception e) {
                throw new IllegalStateException("cannot reach RabbitMQ: " + e.getMessage(), e);
            }
        } else {
            this.kafka = null;
            this.sqsEndpoint = engines.sqsEndpoint();
            SqsMessageTransport sqsTransport = new SqsMessageTransport(SqsSettings.local(sqsEndpoint).withWaitTimeSeconds(1));
            this.transport = sqsTransport;
            this.dlq = sqsTransport.deadLetters();
            this.amqp = null;
            this.sqs = new SqsCounts(sqsEndpoint);
        }
    }

    /**
     * One run: publish a fresh set of messages, let the child be SIGKILLed at {@code point} up to {@code kills} times
     * (the first at a random one of the first reachings, later ones at the next), then drain with a healthy child and
     * count. {@code mode} {@code broken-ack-first} runs the deliberately broken consumer.
     */
    Report run(CrashPoint point, int kills, long seed, String mode) throws Exception {
        if (!point.appliesTo(combination) || mode.equals("broken-no-inbox") && combination.store != Combination.Store.POSTGRES) {
            throw new IllegalArgumentException(point + " has no path on " + combination);
        }
        Random random = new Random(seed);
        int run = ++runs;
        String queue = queueName(run);
        shareGroupForKills(queue);
        String consumer = "crash-" + tag + "-" + run;
        List<String> problems = new ArrayList<>();
        // a shutdown kill needs deliveries still in flight at each SIGTERM: more messages for that point
        Map<String, Integer> expected = publish(queue, run, point == CrashPoint.DURING_SHUTDOWN ? 5 * PLAIN : PLAIN);
        int made = 0;
        if (point == CrashPoint.REDRIVE_PUBLISHED_BEFORE_REMOVAL) {
            drain(queue, consumer, run, mode, expectedBeforeRedrive(expected), problems, "before-redrive");
            liftPoison(expected.keySet());
            for (int k = 0; k < kills; k++) {
                int hit = k == 0 ? 1 + random.nextInt(POISONED) : 1;
                if (k > 0) {
                    awaitVisibleDeadLetter(queue); // on SQS what the killed scan received is hidden for 10 s
                }
                made += killAt(point, hit, queue, consumer, "redrive", run, k, problems) ? 1 : 0;
            }
            redriveWhatIsLeft(queue, consumer, run); // what the killed redrives left behind
        } else if (point == CrashPoint.DURING_SHUTDOWN) {
            for (int k = 0; k < kills; k++) {
                made += killDuringShutdown(queue, consumer, mode, run, k, random, problems) ? 1 : 0;
            }
        } else {
            for (int k = 0; k < kills; k++) {
                if (k > 0 && point == CrashPoint.RETRY_REPUBLISHED_BEFORE_ACK) {
                    // fresh messages that fail their first attempt: the earlier ones may all have been retried (on
                    // Kafka the killed delivery's retry copy can even be processed before its original comes back,
                    // which then is a duplicate and fails nothing), so a later kill would find no retry to stop in
                    expected.putAll(publish(queue, run + "-" + k, 0, 0));
                }
                int hit = k == 0 ? 1 + random.nextInt(maxHit(point)) : 1;
                made += killAt(point, hit, queue, consumer, mode, run, k, problems) ? 1 : 0;
            }
        }
        if (point == CrashPoint.REDRIVE_PUBLISHED_BEFORE_REMOVAL) {
            expected.replaceAll((id, n) -> 1); // every poisoned message was redriven and must run once
        }
        drain(queue, consumer, run, "consume", expected, problems, "drain");
        return count(point, mode, made, queue, consumer, expected, problems);
    }

    /** One kill of a chain: the consumer in {@code mode} ({@code consume} or {@code batched}) killed at {@code point}. */
    record Step(String mode, CrashPoint point) {
        @Override
        public String toString() {
            return (mode.equals("consume") ? "" : mode + " ") + point;
        }
    }

    /**
     * Every step's kill in one run, on one queue: for each step a fresh set of messages is published (plain, retried
     * once, poisoned; more for a shutdown kill) and a child armed at the step's point is started and SIGKILLed there
     * (what the earlier children left unsettled is consumed by the later ones too); a redrive step comes last (drained,
     * the poison lifted, the redrive killed, finished by a healthy one); then one healthy child drains everything and
     * the totals are counted. One kill per point at the cost of about one child start per point, instead of
     * {@link #run}'s kills, drain and set-up per point. The report's kills count the kills that landed; a step whose
     * point was never reached is a problem.
     */
    Report runChain(List<Step> steps, long seed) throws Exception {
        if (steps.stream().anyMatch(st -> st.point() == CrashPoint.REDRIVE_PUBLISHED_BEFORE_REMOVAL)
                && steps.stream().noneMatch(st -> st.point() == CrashPoint.DEAD_LETTERED_BEFORE_REMOVAL)) {
            throw new IllegalArgumentException("a redrive kill needs dead letters: add a DEAD_LETTERED_BEFORE_REMOVAL step");
        }
        Random random = new Random(seed);
        int run = ++runs;
        String queue = queueName(run);
        shareGroupForKills(queue);
        String consumer = "crash-" + tag + "-" + run;
        List<String> problems = new ArrayList<>();
        Map<String, Integer> expected = new LinkedHashMap<>();
        int made = 0;
        int segment = 0;
        boolean redrive = false;
        for (Step step : steps) {
            if (!step.point().appliesTo(combination)) {
                throw new IllegalArgumentException(step.point() + " has no path on " + combination);
            }
            if (step.point() == CrashPoint.REDRIVE_PUBLISHED_BEFORE_REMOVAL) {
                redrive = true; // after every other step: it needs the queue drained and the poison lifted
                continue;
            }
            segment++;
            long t0 = System.nanoTime();
            // poisoned messages only where a dead letter is the point: each one is a dead letter the redrive step
            // must move, and a redrive is slow on Kafka (the topic is read anew per dead letter)
            expected.putAll(publish(queue, run + "-" + segment,
                    step.point() == CrashPoint.DURING_SHUTDOWN ? 5 * PLAIN : PLAIN,
                    step.point() == CrashPoint.DEAD_LETTERED_BEFORE_REMOVAL ? POISONED : 0));
            boolean landed = step.point() == CrashPoint.DURING_SHUTDOWN
                    ? killDuringShutdown(queue, consumer, step.mode(), run, segment, random, problems)
                    : killAt(step.point(), 1 + random.nextInt(maxHit(step.point())), queue, consumer, step.mode(), run,
                            segment, problems, true);
            timing(step.toString(), t0);
            if (landed) {
                made++;
            } else {
                problems.add(step + ": the kill did not land");
            }
        }
        if (redrive) {
            long t0 = System.nanoTime();
            drain(queue, consumer, run, "consume", new LinkedHashMap<>(expected), problems, "before-redrive");
            timing("drain before the redrive", t0);
            t0 = System.nanoTime();
            liftPoison(expected.keySet());
            made += killAt(CrashPoint.REDRIVE_PUBLISHED_BEFORE_REMOVAL, 1 + random.nextInt(POISONED), queue, consumer,
                    "redrive", run, ++segment, problems, true) ? 1 : 0;
            timing(CrashPoint.REDRIVE_PUBLISHED_BEFORE_REMOVAL.toString(), t0);
            t0 = System.nanoTime();
            redriveWhatIsLeft(queue, consumer, run);
            timing("healthy redrive", t0);
            expected.replaceAll((id, n) -> 1); // every poisoned message was redriven and must run once
        }
        long t0 = System.nanoTime();
        drain(queue, consumer, run, "consume", expected, problems, "drain");
        timing("final drain", t0);
        if (redrive && !deadLetterIds(queue).isEmpty()) {
            problems.add("dead letters left after the redrive: " + deadLetterIds(queue));
        }
        String mode = "chain of " + steps.size() + ": " + steps;
        return count(null, mode, made, queue, consumer, expected, problems);
    }

    /**
     * A share group's records held by a killed child come back when their acquisition lock runs out: 3 s here (30 s by
     * default), and up to 10 deliveries (5 by default) before idemkit dead-letters a record on its last one, since one
     * record may be held at several kills of a chain.
     */
    private void shareGroupForKills(String queue) throws Exception {
        if (combination.share) {
            kafka.configureShareGroup(queue, Map.of("share.record.lock.duration.ms", "3000",
                    "share.delivery.count.limit", "10"));
        }
    }

    /** One line per step of a chain with its duration, for whoever wants to know where a run's time goes. */
    private void timing(String what, long startNanos) {
        System.out.printf("crash-harness-step %s %s %d ms%n", combination, what,
                (System.nanoTime() - startNanos) / 1_000_000);
    }

    /** Healthy redrives until the DLQ is empty (on SQS a dead letter a killed scan received is hidden for 10 s). */
    private void redriveWhatIsLeft(String queue, String consumer, int run) throws Exception {
        long deadline = System.nanoTime() + DRAIN.toNanos();
        int round = 0;
        do {
            try (ChildJvm redrive = child(queue, consumer, "redrive", null, 0, 0, run, "redrive-" + round++)) {
                redrive.awaitExit(READY);
            }
        } while (dlq.depth(queue) > 0 && System.nanoTime() < deadline && sleep(1000));
    }

    /**
     * The delivery-limit safety net (quorum queues): a message whose effect makes the consumer PROCESS exit before it
     * can settle or count an attempt ({@code exit-} ids: {@link CrashChild} halts) is delivered to one fresh child after
     * another, each of which dies holding it, until the broker has returned it more often than the queue's
     * {@code x-delivery-limit} ({@code IDEMKIT_RABBIT_DELIVERY_LIMIT} in the children's environment) and dead-letters
     * it. Expected: at most limit + 1 such exits (fewer when a dying connection returns it once per channel), the
     * message in the DLQ with the delivery-limit reason and no effect; every other message published with it processed
     * once or, when it was held beside the poison each time a consumer died (the broker counts it too), dead-lettered
     * for the same reason and, redriven with an approval, processed once: never lost, never run twice.
     */
    Report runDeliveryLimit(int limit) throws Exception {
        int run = ++runs;
        String queue = queueName(run);
        String consumer = "crash-" + tag + "-" + run;
        List<String> problems = new ArrayList<>();
        String poison = "exit-" + tag + "-" + run;
        transport.publish(queue, OutgoingMessage.of(poison, ("{\"id\":\"" + poison + "\"}").getBytes(StandardCharsets.UTF_8)));
        List<String> plain = new ArrayList<>();
        for (int i = 1; i <= PLAIN / 2; i++) {
            String id = "m-" + tag + "-" + run + "-" + i;
            plain.add(id);
            transport.publish(queue, OutgoingMessage.of(id, ("{\"id\":\"" + id + "\"}").getBytes(StandardCharsets.UTF_8)));
        }
        int exits = 0;
        while (!deadLetterIds(queue).contains(poison) && exits <= limit + 2) {
            try (ChildJvm child = child(queue, consumer, "consume", null, 0, 0, run, "exit-" + exits)) {
                if (child.awaitLine("READY", READY).isEmpty() && child.alive()) {
                    problems.add("child " + exits + " never became ready");
                    break;
                }
                long deadline = System.nanoTime() + REACH.toNanos();
                while (child.alive() && !(dlq.depth(queue) > 0 && deadLetterIds(queue).contains(poison))
                        && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                if (!child.alive()) {
                    int status = child.awaitExit(Duration.ofSeconds(5));
                    if (status == CrashChild.EXIT_ON_MESSAGE) {
                        exits++;
                    } else {
                        problems.add("child " + exits + " ended with " + status + "; log " + child.log());
                        break;
                    }
                } else if (!deadLetterIds(queue).contains(poison)) {
                    problems.add("child " + exits + " neither died on the poison nor saw it dead-lettered in " + REACH);
                    break;
                }
            }
        }
        // a dying connection may return a message once per consumer channel (RabbitMQ 3.10 hands it to the
        // connection's next channel while that one is closing), so each exit counts once or up to twice here
        int channels = 2;
        if (exits > limit + 1 || exits < (limit + channels) / channels) {
            problems.add("the poison killed " + exits + " consumers; a delivery limit of " + limit + " allows "
                    + (limit + channels) / channels + ".." + (limit + 1) + " with " + channels + " channels each");
        }
        drainQuietly(queue, consumer, run, plain, problems);
        List<String> dead = new ArrayList<>();
        for (DeadLetterEntry e : dlq.peek(queue, 1000)) {
            String id = e.deadLetter().original().rawId();
            if (!e.deadLetter().reason().contains("delivery limit reached")) {
                problems.add("dead letter " + id + " for another reason: " + e.deadLetter().reason());
            }
            dead.add(id);
        }
        if (!dead.contains(poison)) {
            problems.add("the poison is not in the DLQ with the delivery-limit reason");
        }
        Map<String, Integer> beforeRedrive = effects(consumer);
        for (String id : plain) {
            if (beforeRedrive.getOrDefault(id, 0) == 1 && dead.contains(id)) {
                problems.add(id + " both processed and dead-lettered");
            }
        }
        // what was dead-lettered only for having been held beside the poison: redriven (approved), processed once
        for (DeadLetterEntry e : dlq.peek(queue, 1000)) {
            if (!e.deadLetter().original().rawId().equals(poison)) {
                dlq.redrive(queue, e.id(), new Approval("crash-harness", "held beside a poison message", Instant.now()));
            }
        }
        drainQuietly(queue, consumer, run, plain, problems);
        Map<String, Integer> effects = effects(consumer);
        if (effects.getOrDefault(poison, 0) != 0) {
            problems.add("the poison's effect committed");
        }
        int lost = 0;
        int duplicated = 0;
        for (String id : plain) {
            int n = effects.getOrDefault(id, 0);
            lost += n == 0 ? 1 : 0;
            duplicated += n > 1 ? 1 : 0;
        }
        if (dlq.depth(queue) != 1) {
            problems.add("the DLQ should hold the poison alone after the redrive, holds " + deadLetterIds(queue));
        }
        int unsettled = (int) pending(queue);
        return new Report(combination, null, "delivery-limit " + limit + ", " + (dead.size() - 1)
                + " dead-lettered beside the poison, redriven", exits, plain.size() + 1, lost, duplicated, unsettled,
                dead.size(), problems);
    }

    /** A healthy child until every one of {@code ids} is processed or dead-lettered and the queue is empty. */
    private void drainQuietly(String queue, String consumer, int run, List<String> ids, List<String> problems)
            throws Exception {
        try (ChildJvm child = child(queue, consumer, "consume", null, 0, 0, run, "drain")) {
            if (child.awaitLine("READY", READY).isEmpty()) {
                problems.add("the draining child never became ready; log " + child.log());
                return;
            }
            long deadline = System.nanoTime() + DRAIN.toNanos();
            while (System.nanoTime() < deadline) {
                Map<String, Integer> effects = effects(consumer);
                // the cheap reads first: the dead letters are read only once nothing is left to deliver
                if (pending(queue) == 0) {
                    List<String> dead = deadLetterIds(queue);
                    if (ids.stream().allMatch(id -> effects.containsKey(id) || dead.contains(id))) {
                        return;
                    }
                }
                Thread.sleep(100);
            }
            problems.add("not drained within " + DRAIN);
        }
    }

    private void awaitVisibleDeadLetter(String queue) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (dlq.depth(queue) > 0 && dlq.peek(queue, 10).isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(500);
        }
    }

    private static boolean sleep(long millis) throws InterruptedException {
        Thread.sleep(millis);
        return true;
    }

    private static int maxHit(CrashPoint point) {
        return switch (point) {
            case RETRY_REPUBLISHED_BEFORE_ACK -> RETRIED;
            case DEAD_LETTERED_BEFORE_REMOVAL, REDRIVE_PUBLISHED_BEFORE_REMOVAL -> POISONED;
            default -> PLAIN;
        };
    }

    /** Starts a child armed at {@code point}/{@code hit}; SIGKILLs it when it stops there. @return whether it did */
    private boolean killAt(CrashPoint point, int hit, String queue, String consumer, String mode, int run, int k,
            List<String> problems) throws Exception {
        return killAt(point, hit, queue, consumer, mode, run, k, problems, k == 0);
    }

    /** As above; {@code mustReach}: a point not reached is a problem (a later kill of a run may find nothing left). */
    private boolean killAt(CrashPoint point, int hit, String queue, String consumer, String mode, int run, int k,
            List<String> problems, boolean mustReach) throws Exception {
        try (ChildJvm child = child(queue, consumer, mode, point, hit, 0, run, "kill-" + k)) {
            Optional<String> reached = child.awaitLine("CRASH-POINT", REACH);
            if (reached.isEmpty()) {
                if (mustReach) {
                    problems.add(point + " was never reached (hit " + hit + "); log " + child.log());
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

    /** SIGTERM once the child is busy, then SIGKILL while it closes. @return whether the kill landed before it stopped */
    private boolean killDuringShutdown(String queue, String consumer, String mode, int run, int k, Random random,
            List<String> problems) throws Exception {
        try (ChildJvm child = child(queue, consumer, mode, null, 0, 400, run, "shutdown-" + k)) {
            if (child.awaitLine("READY", READY).isEmpty()) {
                problems.add("child did not start; log " + child.log());
                return false;
            }
            // busy: two effects of this child committed, more in flight
            int before = effectCount(consumer);
            long deadline = System.nanoTime() + REACH.toNanos();
            while (effectCount(consumer) < before + 2 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            child.signalTerm();
            if (child.awaitLine("STOPPING", Duration.ofSeconds(10)).isEmpty()) {
                problems.add("shutdown " + k + ": the child never started its shutdown; log " + child.log());
            }
            // slow effects (400 ms, several in flight) keep the close busy: the kill lands while deliveries settle
            Thread.sleep(random.nextInt(100));
            boolean landed = child.alive();
            child.kill();
            return landed;
        }
    }

    /**
     * Runs a healthy child until {@code expected} holds and the work queue is empty, then stops it with SIGTERM; again
     * (at most {@value #DRAIN_ROUNDS} children) while the stop left deliveries behind. A RabbitMQ queue counts what a
     * child fetched and has not settled yet as unacknowledged, not ready, so "empty" can hold while the child still has
     * redelivered duplicates of a killed child's committed batch in its prefetch; its graceful stop hands them back to
     * the queue (nothing is lost: they are delivered again). The full tier failed on that race under load
     * (unsettled=1..4, nothing lost or duplicated).
     */
    private void drain(String queue, String consumer, int run, String mode, Map<String, Integer> expected,
            List<String> problems, String name) throws Exception {
        for (int round = 0; round < DRAIN_ROUNDS; round++) {
            String label = round == 0 ? name : name + "-again-" + round;
            try (ChildJvm child = child(queue, consumer, mode, null, 0, 0, run, label)) {
                if (child.awaitLine("READY", READY).isEmpty()) {
                    problems.add(label + ": child did not start; log " + child.log());
                    return;
                }
                awaitDrained(queue, consumer, expected);
                child.terminate();
            }
            if (pending(queue) == 0) {
                return;
            }
        }
    }

    /**
     * Until the expected state holds, or nothing is left to deliver and nothing changed for a while (what is missing
     * then will not come: lost), or the bound runs out. Reads that fail (an engine restarting) count as a change.
     */
    private void awaitDrained(String queue, String consumer, Map<String, Integer> expected) throws Exception {
        long deadline = System.nanoTime() + DRAIN.toNanos();
        Map<String, Integer> last = Map.of();
        long quietSince = System.nanoTime();
        long doneSince = -1;
        while (System.nanoTime() < deadline) {
            Map<String, Integer> now;
            long left;
            try {
                now = effects(consumer);
                left = pending(queue);
                // the dead letters (a whole topic read, on Kafka) only once the effects and the queues say done
                if (now.equals(expectedEffects(expected)) && left == 0
                        && deadLetterIds(queue).stream().distinct().count() >= expectedDeadLetters(expected)) {
                    // done, and still done half a second later: the child has had the time to settle the redelivered
                    // duplicates it fetched (which the broker counts unacknowledged, not ready); drain checks again
                    // after the stop
                    if (doneSince < 0) {
                        doneSince = System.nanoTime();
                    } else if (System.nanoTime() - doneSince >= SETTLED.toNanos()) {
                        return;
                    }
                    Thread.sleep(100);
                    continue;
                }
                doneSince = -1;
            } catch (SQLException | IOException | RuntimeException e) {
                quietSince = System.nanoTime();
                Thread.sleep(200);
                continue;
            }
            if (!now.equals(last) || left > 0) {
                last = now;
                quietSince = System.nanoTime();
            } else if (System.nanoTime() - quietSince > QUIET.toNanos()) {
                return;
            }
            Thread.sleep(150);
        }
    }

    private Report count(CrashPoint point, String mode, int kills, String queue, String consumer,
            Map<String, Integer> expected, List<String> problems) throws Exception {
        Map<String, Integer> actual = effects(consumer);
        List<String> deadIds = deadLetterIds(queue);
        int lost = 0;
        int duplicated = 0;
        for (Map.Entry<String, Integer> e : expected.entrySet()) {
            int got = actual.getOrDefault(e.getKey(), 0);
            if (got > 1 || got > e.getValue()) {
                duplicated++;
            }
            boolean dead = deadIds.contains(e.getKey());
            if (e.getValue() == 1 ? got == 0 : !dead) {
                lost++;
            }
        }
        int unsettled = (int) pending(queue);
        if (combination.positionsInStore && storedPositions(queue) == 0) {
            problems.add("offsets in the database: no position of " + queue + " was stored");
        }
        if (point == CrashPoint.REDRIVE_PUBLISHED_BEFORE_REMOVAL && !deadIds.isEmpty()) {
            problems.add("dead letters left after the redrive: " + deadIds);
        }
        Report r = new Report(combination, point, mode, kills, expected.size(), lost, duplicated, unsettled,
                deadIds.size(), List.copyOf(problems));
        deleteQueue(queue);
        return r;
    }

    /** Publishes the run's messages; returns, per id, how many effects a correct consumer ends with (0: poisoned). */
    /** A fault injected from outside while the consumer runs (an engine restarted, connections closed). */
    @FunctionalInterface
    interface Fault {
        void inject() throws Exception;
    }

    /**
     * Engine faults with the same totals check: {@code messages} plain messages (a few retried once) published, a
     * healthy child consuming them slowly, {@code fault} injected each time the committed effects pass one of
     * {@code after}, then drained.
     */
    Report runWithFault(String name, int messages, List<Integer> after, Fault fault) throws Exception {
        int run = ++runs;
        String queue = queueName(run);
        String consumer = "crash-" + tag + "-" + run;
        List<String> problems = new ArrayList<>();
        Map<String, Integer> expected = new LinkedHashMap<>();
        for (int i = 1; i <= messages; i++) {
            expected.put((i % 25 == 0 ? "retry-" : "m-") + tag + "-" + run + "-" + i, 1);
        }
        for (String id : expected.keySet()) {
            transport.publish(queue, OutgoingMessage.of(id, ("{\"id\":\"" + id + "\"}").getBytes(StandardCharsets.UTF_8)));
        }
        try (ChildJvm child = child(queue, consumer, "consume", null, 0, 5, run, name)) {
            if (child.awaitLine("READY", READY).isEmpty()) {
                problems.add(name + ": child did not start; log " + child.log());
            } else {
                for (int threshold : after) {
                    long deadline = System.nanoTime() + DRAIN.toNanos();
                    while (effectCountQuietly(consumer) < threshold && System.nanoTime() < deadline) {
                        Thread.sleep(20);
                    }
                    fault.inject();
                }
                awaitDrained(queue, consumer, expected);
                if (!child.alive()) {
                    problems.add(name + ": the consumer died; log " + child.log());
                }
                child.terminate();
            }
        }
        return count(null, name, after.size(), queue, consumer, expected, problems);
    }

    /** The effect count, or 0 while the store cannot be read (it is being restarted). */
    private int effectCountQuietly(String consumer) {
        try {
            return effectCount(consumer);
        } catch (SQLException | RuntimeException e) {
            return 0;
        }
    }

    private Map<String, Integer> publish(String queue, int run, int plain) throws SQLException {
        return publish(queue, Integer.toString(run), plain, POISONED);
    }

    /** The same, with {@code label} (a run, or a run and a chain's segment) in the ids, and {@code poisoned} of those. */
    private Map<String, Integer> publish(String queue, String label, int plain, int poisoned) throws SQLException {
        Map<String, Integer> expected = new LinkedHashMap<>();
        for (int i = 1; i <= plain; i++) {
            expected.put("m-" + tag + "-" + label + "-" + i, 1);
        }
        for (int i = 1; i <= RETRIED; i++) {
            expected.put("retry-" + tag + "-" + label + "-" + i, 1);
        }
        for (int i = 1; i <= poisoned; i++) {
            String id = "poison-" + tag + "-" + label + "-" + i;
            expected.put(id, 0);
            poison(id);
        }
        for (String id : expected.keySet()) {
            transport.publish(queue, OutgoingMessage.of(id, ("{\"id\":\"" + id + "\"}").getBytes(StandardCharsets.UTF_8)));
        }
        return expected;
    }

    private static Map<String, Integer> expectedBeforeRedrive(Map<String, Integer> expected) {
        return new LinkedHashMap<>(expected);
    }

    private static Map<String, Integer> expectedEffects(Map<String, Integer> expected) {
        Map<String, Integer> out = new HashMap<>();
        expected.forEach((id, n) -> {
            if (n > 0) {
                out.put(id, n);
            }
        });
        return out;
    }

    private static int expectedDeadLetters(Map<String, Integer> expected) {
        return (int) expected.values().stream().filter(n -> n == 0).count();
    }

    private ChildJvm child(String queue, String consumer, String mode, CrashPoint point, int hit, long effectMillis,
            int run, String name) throws IOException {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("idemkit.crash.combination", combination.name());
        p.put("idemkit.crash.queue", queue);
        p.put("idemkit.crash.consumer", consumer);
        p.put("idemkit.crash.mode", mode);
        p.put("idemkit.crash.point", point == null ? "NONE" : point.name());
        p.put("idemkit.crash.hit", Integer.toString(hit));
        p.put("idemkit.crash.effectMillis", Long.toString(effectMillis));
        p.put("idemkit.crash.connection", "idemkit-it-crash-" + tag + "-" + run);
        if (schema != null) {
            p.put("idemkit.crash.schema", schema);
        }
        if (redisPrefix != null) {
            p.put("idemkit.crash.redisPrefix", redisPrefix);
        }
        if (sqsEndpoint != null) {
            p.put("idemkit.crash.sqsEndpoint", sqsEndpoint.toString());
        }
        if (kafka != null) {
            p.put("idemkit.crash.kafka", KafkaBroker.shared().bootstrapServers());
        }
        return CrashJvms.start(CrashChild.class.getName(), p, childEnv,
                combination + "-" + (point == null ? "none" : point) + "-" + tag + "-" + run + "-" + name);
    }

    /** The child's connection names start with this (for closing them from the broker's side). */
    String connectionPrefix() {
        return "idemkit-it-crash-" + tag;
    }

    private String queueName(int run) {
        String q = combination.transport == Combination.Transport.SQS ? "crash-" + tag + "-" + run
                : "idemkit-it-crash-" + tag + "-" + run;
        queues.add(q);
        return q;
    }

    // ---------------------------------------------------------------- what the store and the broker hold

    /** Effects per message id of one consumer. */
    /** Rows of {@code consumer_positions} for the work topic (the child keeps its group's positions there). */
    private long storedPositions(String queue) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM consumer_positions WHERE topic = ? AND next_offset > 0")) {
            ps.setString(1, queue);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long n = rs.getLong(1);
                c.rollback();
                return n;
            }
        }
    }

    Map<String, Integer> effects(String consumer) throws SQLException {
        Map<String, Integer> out = new HashMap<>();
        if (db != null) {
            try (Connection c = db.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(
                    "SELECT message_id, count(*) FROM " + CrashChild.EFFECTS_TABLE + " WHERE consumer = ? GROUP BY message_id")) {
                ps.setString(1, consumer);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.put(rs.getString(1), rs.getInt(2));
                    }
                }
                c.rollback();
            }
        } else {
            redis.<String, String>getMap(redisPrefix + ":crash-effects:" + consumer, StringCodec.INSTANCE).readAllMap()
                    .forEach((id, n) -> out.put(id, Integer.parseInt(n)));
        }
        return out;
    }

    private int effectCount(String consumer) throws SQLException {
        return effects(consumer).values().stream().mapToInt(Integer::intValue).sum();
    }

    /** Messages still in the work queue and its retry buckets (SQS: visible or in flight). */
    long pending(String queue) throws IOException {
        if (kafka != null) {
            try {
                return kafka.pending(queue);
            } catch (Exception e) {
                throw new IOException(e);
            }
        }
        if (amqp != null) {
            long n = ready(queue);
            for (int bucket = 1; bucket <= 4096; bucket *= 2) {
                n += ready(queue + ".retry." + bucket + "s");
            }
            return n;
        }
        return sqs.pending(queue);
    }

    /** Ready messages of a RabbitMQ queue, 0 when it does not exist. */
    private long ready(String queue) throws IOException {
        return TestRabbit.readyOrZero(amqp, queue);
    }

    /** The message ids in the DLQ of {@code queue}, one entry per dead letter. */
    List<String> deadLetterIds(String queue) {
        return dlq.peek(queue, 1000).stream().map(DeadLetterEntry::deadLetter).map(d -> d.original().rawId()).toList();
    }

    private void poison(String id) throws SQLException {
        if (db != null) {
            try (Connection c = db.dataSource().getConnection();
                    PreparedStatement ps = c.prepareStatement("INSERT INTO " + CrashChild.POISON_TABLE + " VALUES (?)")) {
                ps.setString(1, id);
                ps.executeUpdate();
                c.commit();
            }
        } else {
            redis.getBucket(redisPrefix + ":crash-poison:" + id, StringCodec.INSTANCE).set("1");
        }
    }

    private void liftPoison(Iterable<String> ids) throws SQLException {
        for (String id : ids) {
            if (db != null) {
                try (Connection c = db.dataSource().getConnection();
                        PreparedStatement ps = c.prepareStatement("DELETE FROM " + CrashChild.POISON_TABLE
                                + " WHERE message_id = ?")) {
                    ps.setString(1, id);
                    ps.executeUpdate();
                    c.commit();
                }
            } else {
                redis.getBucket(redisPrefix + ":crash-poison:" + id, StringCodec.INSTANCE).delete();
            }
        }
    }

    private void sql(String statement) {
        try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute(statement);
            c.commit();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private void deleteQueue(String queue) {
        try {
            if (transport instanceof RabbitMessageTransport rabbit) {
                rabbit.deleteTopology(queue);
            } else if (transport instanceof KafkaMessageTransport k) {
                k.deleteTopics(queue);
            } else {
                ((SqsMessageTransport) transport).deleteQueues(queue);
            }
        } catch (RuntimeException e) {
            // best effort: the run's verdict is already taken
        }
        queues.remove(queue);
    }

    @Override
    public void close() throws Exception {
        for (String q : List.copyOf(queues)) {
            deleteQueue(q);
        }
        transport.close();
        if (amqp != null) {
            amqp.close();
        }
        if (sqs != null) {
            sqs.close();
        }
        if (kafka != null) {
            kafka.close();
        }
        if (db != null) {
            db.close();
            TestPostgres.dropSchema(schema);
        }
        if (redis != null) {
            redis.getKeys().deleteByPattern(redisPrefix + ":*");
            redis.shutdown();
        }
        engines.close();
    }
}
