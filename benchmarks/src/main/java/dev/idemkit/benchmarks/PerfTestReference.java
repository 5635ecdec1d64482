package dev.idemkit.benchmarks;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Proxy;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * RabbitMQ PerfTest (com.rabbitmq:perf-test), the broker's own load tool, run in this JVM as the
 * reference drain rate: its consumers (manual ack of each message, the same prefetch and consumer count)
 * empty a queue pre-filled with the same messages as idemkit's cases. PerfTest is found on the class
 * path by name and run through its {@code run} entry point (its {@code main} would exit the JVM).
 *
 * <p>Timing: from starting PerfTest until the queue holds no ready message, polled every 5 ms. At that
 * moment up to prefetch x consumers messages may still be unacknowledged, which flatters PerfTest by at
 * most that share; its connection set-up (tens of ms) counts against it.
 */
final class PerfTestReference {
    private static final String MAIN = "com.rabbitmq.perf.PerfTest";

    private PerfTestReference() {}

    static boolean available() {
        try {
            Class.forName(MAIN);
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    /** Seconds PerfTest took to drain {@code queue}; the queue must hold {@code expected} messages. */
    static double drain(URI broker, String queue, int consumers, int prefetch, int limitSeconds) throws Exception {
        com.rabbitmq.client.ConnectionFactory factory = new com.rabbitmq.client.ConnectionFactory();
        factory.setUri(broker);
        try (com.rabbitmq.client.Connection counting = factory.newConnection("idemkit-bench-counts");
                com.rabbitmq.client.Channel channel = counting.createChannel()) {
            return drain(channel, broker, queue, consumers, prefetch, limitSeconds);
        }
    }

    private static double drain(com.rabbitmq.client.Channel counts, URI broker, String queue, int consumers,
            int prefetch, int limitSeconds) throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        ByteArrayOutputStream output = new ByteArrayOutputStream();
        Thread runner = new Thread(() -> {
            try {
                run(output, "-h", broker.toString(), "-u", queue, "-p", "-e", "amq.direct", "-x", "0", "-y",
                        String.valueOf(consumers), "-q", String.valueOf(prefetch), "--exit-when", "empty", "-z",
                        String.valueOf(limitSeconds));
            } catch (Throwable e) {
                failure.set(e);
            }
        }, "idemkit-bench-perftest");
        long began = System.nanoTime();
        runner.start();
        long deadline = began + limitSeconds * 1_000_000_000L;
        long ready = Long.MAX_VALUE;
        while (ready > 0 && System.nanoTime() < deadline && failure.get() == null) {
            Thread.sleep(5);
            ready = counts.queueDeclarePassive(queue).getMessageCount();
        }
        double seconds = (System.nanoTime() - began) / 1e9;
        runner.join(limitSeconds * 1000L + 5000);
        if (failure.get() != null) {
            throw new IllegalStateException("PerfTest failed: " + failure.get() + "\n"
                    + output.toString(StandardCharsets.UTF_8), failure.get());
        }
        if (ready > 0) {
            throw new IllegalStateException("PerfTest left " + ready + " messages in " + queue + " after "
                    + limitSeconds + " s:\n" + output.toString(StandardCharsets.UTF_8));
        }
        return seconds;
    }

    /**
     * PerfTest's main without its System.exit, its console captured (it also prints some lines with
     * {@code System.out} itself, so that is swapped while it runs; the command's own output keeps the
     * stream it was given at start-up).
     */
    private static synchronized void run(ByteArrayOutputStream buffer, String... args) throws Exception {
        PrintStream original = System.out;
        System.setOut(new PrintStream(buffer, true, StandardCharsets.UTF_8));
        try {
            invoke(buffer, args);
        } finally {
            System.setOut(original);
        }
    }

    private static void invoke(ByteArrayOutputStream buffer, String... args) throws Exception {
        Class<?> perfTest = Class.forName(MAIN);
        Class<?> options = Class.forName(MAIN + "$PerfTestOptions");
        Class<?> exiter = Class.forName(MAIN + "$SystemExiter");
        PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);
        Object opts = options.getConstructor().newInstance();
        Object noExit = Proxy.newProxyInstance(exiter.getClassLoader(), new Class<?>[] {exiter}, (p, m, a) -> null);
        options.getMethod("setSystemExiter", exiter).invoke(opts, noExit);
        options.getMethod("setConsoleOut", PrintStream.class).invoke(opts, out);
        options.getMethod("setConsoleErr", PrintStream.class).invoke(opts, out);
        List<String> all = new ArrayList<>(List.of(args));
        perfTest.getMethod("main", String[].class, options).invoke(null, all.toArray(String[]::new), opts);
    }
}
