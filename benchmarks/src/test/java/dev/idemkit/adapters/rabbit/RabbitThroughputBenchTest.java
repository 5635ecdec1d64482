package dev.idemkit.adapters.rabbit;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Throughput beside RabbitMQ's PerfTest on the same broker in the same run (1 KB persistent messages,
 * manual ack of each message): end to end (publish with confirms -> consume -> handler -> ack) and
 * drain (consume-and-ack of a pre-filled queue, no effect), at prefetch 100 and 1000 with 1 and 4
 * consumers. Prints a table; asserts nothing about speed. Run:
 * {@code ./mvnw -o -Pbench -pl adapters-rabbit test -Dtest=RabbitThroughputBenchTest}
 */
@Tag("bench")
class RabbitThroughputBenchTest {
    private static final int BODY = 1024;
    private static final int E2E_SECONDS = 4;
    private static final int DRAIN_MESSAGES = 15_000;
    private static final int PUBLISHERS = 16;

    @Test
    void throughputBesidePerfTest() throws Exception {
        assumeTrue(perfTestPresent(), "PerfTest is on the class path only with -Pbench");
        List<String> rows = new ArrayList<>();
        rows.add(String.format("%-8s %-9s %14s %14s %6s %14s %14s %6s", "prefetch", "consumers", "idemkit e2e",
                "PerfTest e2e", "ratio", "idemkit drain", "PerfTest drain", "ratio"));
        try (Connection raw = RabbitFixtures.rawConnection()) {
            for (int prefetch : new int[] {100, 1000}) {
                for (int consumers : new int[] {1, 4}) {
                    double e2e = idemkitEndToEnd(raw, prefetch, consumers);
                    double ptE2e = perfTestEndToEnd(raw, prefetch, consumers);
                    double drain = idemkitDrain(raw, prefetch, consumers);
                    double ptDrain = perfTestDrain(raw, prefetch, consumers);
                    rows.add(String.format("%-8d %-9d %14.0f %14.0f %6.2f %14.0f %14.0f %6.2f", prefetch, consumers,
                            e2e, ptE2e, e2e / ptE2e, drain, ptDrain, drain / ptDrain));
                    System.out.println(rows.get(rows.size() - 1));
                }
            }
        }
        System.out.println("msg/s, 1 KB persistent, manual ack each; e2e = " + E2E_SECONDS + " s window; drain = "
                + DRAIN_MESSAGES + " pre-filled messages\n" + String.join("\n", rows));
    }

    private static RabbitSettings settings(int prefetch, int consumers) {
        return RabbitFixtures.settings().withPrefetch(prefetch).withConsumers(consumers);
    }

    /** Publishers with confirms for a fixed window; rate = messages acked by the consumer in the window. */
    private static double idemkitEndToEnd(Connection raw, int prefetch, int consumers) throws Exception {
        String queue = RabbitFixtures.anyQueue("bench-e2e");
        try (RabbitMessageTransport t = new RabbitMessageTransport(settings(prefetch, consumers), Clock.system(),
                RabbitFixtures.anyConnectionName("bench"))) {
            AtomicLong acked = new AtomicLong();
            Subscription s = t.subscribe(queue, d -> {
                d.ack();
                acked.incrementAndGet();
            });
            AtomicBoolean running = new AtomicBoolean(true);
            byte[] body = new byte[BODY];
            AtomicLong ids = new AtomicLong();
            List<Thread> publishers = new ArrayList<>();
            for (int i = 0; i < PUBLISHERS; i++) {
                Thread p = new Thread(() -> {
                    while (running.get()) {
                        t.publish(queue, OutgoingMessage.of("m-" + ids.incrementAndGet(), body));
                    }
                });
                p.start();
                publishers.add(p);
            }
            Thread.sleep(1000); // warm-up
            long start = acked.get();
            long began = System.nanoTime();
            Thread.sleep(E2E_SECONDS * 1000L);
            double rate = (acked.get() - start) / ((System.nanoTime() - began) / 1e9);
            running.set(false);
            for (Thread p : publishers) {
                p.join();
            }
            s.close();
            t.deleteTopology(queue);
            return rate;
        }
    }

    private static double idemkitDrain(Connection raw, int prefetch, int consumers) throws Exception {
        String queue = RabbitFixtures.anyQueue("bench-drain");
        try (RabbitMessageTransport t = new RabbitMessageTransport(settings(prefetch, consumers), Clock.system(),
                RabbitFixtures.anyConnectionName("bench"))) {
            t.declare(queue);
            fill(queue);
            AtomicLong acked = new AtomicLong();
            long began = System.nanoTime();
            Subscription s = t.subscribe(queue, d -> {
                d.ack();
                acked.incrementAndGet();
            });
            while (acked.get() < DRAIN_MESSAGES) {
                Thread.sleep(1);
            }
            double rate = DRAIN_MESSAGES / ((System.nanoTime() - began) / 1e9);
            s.close();
            t.deleteTopology(queue);
            return rate;
        }
    }

    private static double perfTestEndToEnd(Connection raw, int prefetch, int consumers) throws Exception {
        String queue = declarePlain(raw);
        try {
            String out = perfTest("-u", queue, "-p", "-x", "1", "-y", String.valueOf(consumers), "-q",
                    String.valueOf(prefetch), "-c", "100", "-f", "persistent", "-s", String.valueOf(BODY), "-z",
                    String.valueOf(E2E_SECONDS + 1));
            return number(out, "receiving rate avg: (\\d+)");
        } finally {
            delete(raw, queue);
        }
    }

    private static double perfTestDrain(Connection raw, int prefetch, int consumers) throws Exception {
        String queue = declarePlain(raw);
        try {
            fill(queue);
            String out = perfTest("-u", queue, "-p", "-x", "0", "-y", String.valueOf(consumers), "-q",
                    String.valueOf(prefetch), "--exit-when", "empty", "-z", "60");
            return number(out, "receiving rate avg: (\\d+)");
        } finally {
            delete(raw, queue);
        }
    }

    /** Pre-fills {@code queue} with persistent 1 KB messages through PerfTest's producer. */
    private static void fill(String queue) throws Exception {
        perfTest("-u", queue, "-p", "-x", "1", "-y", "0", "-C", String.valueOf(DRAIN_MESSAGES), "-c", "100", "-f",
                "persistent", "-s", String.valueOf(BODY), "-z", "60");
    }

    private static String declarePlain(Connection raw) throws Exception {
        String queue = RabbitFixtures.anyQueue("bench-perftest");
        try (Channel ch = raw.createChannel()) {
            ch.queueDeclare(queue, true, false, false, Map.of());
        }
        return queue;
    }

    private static void delete(Connection raw, String queue) throws Exception {
        try (Channel ch = raw.createChannel()) {
            ch.queueDelete(queue);
        }
    }

    private static double number(String out, String regex) {
        Matcher m = Pattern.compile(regex).matcher(out);
        if (!m.find()) {
            throw new IllegalStateException("PerfTest printed no " + regex + ":\n" + out);
        }
        return Double.parseDouble(m.group(1));
    }

    private static boolean perfTestPresent() {
        try {
            Class.forName("com.rabbitmq.perf.PerfTest");
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    /** PerfTest's main in this JVM, without its System.exit, its output captured. */
    private static String perfTest(String... args) throws Exception {
        Class<?> perfTest = Class.forName("com.rabbitmq.perf.PerfTest");
        Class<?> options = Class.forName("com.rabbitmq.perf.PerfTest$PerfTestOptions");
        Class<?> exiter = Class.forName("com.rabbitmq.perf.PerfTest$SystemExiter");
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);
        Object opts = options.getConstructor().newInstance();
        Object noExit = Proxy.newProxyInstance(exiter.getClassLoader(), new Class<?>[] {exiter}, (p, m, a) -> null);
        options.getMethod("setSystemExiter", exiter).invoke(opts, noExit);
        options.getMethod("setConsoleOut", PrintStream.class).invoke(opts, out);
        options.getMethod("setConsoleErr", PrintStream.class).invoke(opts, out);
        List<String> all = new ArrayList<>(List.of("-h", RabbitFixtures.settings().uri().toString()));
        all.addAll(List.of(args));
        perfTest.getMethod("main", String[].class, options).invoke(null, all.toArray(String[]::new), opts);
        return buffer.toString(StandardCharsets.UTF_8);
    }
}
