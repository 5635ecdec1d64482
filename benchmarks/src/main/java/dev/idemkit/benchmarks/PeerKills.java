package dev.idemkit.benchmarks;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.idemkit.testsupport.ChildJvm;
import java.io.File;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The kill comparison of the peers suite: one service's consuming process ({@link PeerChild}, a JVM of its own) drains
 * a pre-filled queue and is SIGKILLed mid-stream {@code kills} times (when a further share of the distinct credits
 * has been applied: after 1/(kills+1), 2/(kills+1), ...), restarted each time; a last process drains the rest and is
 * stopped once the queue is empty and the balances stayed the same for two seconds. The same kills for every
 * service: where in an exchange a kill lands is chance, as it is in production.
 */
final class PeerKills {
    /**
     * @param twice credits applied more than once (net: the balances grew by more than the distinct ids)
     * @param missing credits never applied (net), with no copy left in the queue
     * @param left messages still in the queue after the last process stopped (none when it finished)
     */
    record Outcome(int kills, long unique, long twice, long missing, long deadLettered, long left, double seconds) {}

    private final BenchDatabase db;
    private final URI rabbitUri;
    private final String classpath;

    PeerKills(BenchDatabase db, URI rabbitUri) {
        this.db = db;
        this.rabbitUri = rabbitUri;
        this.classpath = classpath();
    }

    Outcome run(String service, Workload w, int consumers, int prefetch, int kills) throws Exception {
        BigDecimal before = db.sumOfBalances();
        long began = System.nanoTime();
        String name = "bench-" + w.label();
        for (int k = 0; k < kills; k++) {
            try (ChildJvm child = start(service, w, name, consumers, prefetch)) {
                long target = w.unique() * (k + 1) / (kills + 1);
                long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
                while (credited(before) < target) {
                    if (System.nanoTime() > deadline || !child.alive()) {
                        throw new IllegalStateException(service + ": " + target + " credits not reached before kill "
                                + (k + 1) + "; log: " + child.log());
                    }
                    Thread.sleep(5);
                }
                child.kill();
            }
        }
        long left;
        try (ChildJvm child = start(service, w, name, consumers, prefetch)) {
            long last = -1;
            long stableSince = System.nanoTime();
            long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
            while (System.nanoTime() < deadline) {
                long now = credited(before);
                if (now != last) {
                    last = now;
                    stableSince = System.nanoTime();
                } else if (ready(w.queue()) == 0 && System.nanoTime() - stableSince > Duration.ofSeconds(2).toNanos()) {
                    break;
                }
                Thread.sleep(50);
            }
            child.terminate();
            left = ready(w.queue());
        }
        double seconds = (System.nanoTime() - began) / 1e9;
        long credits = credited(before);
        return new Outcome(kills, w.unique(), Math.max(0, credits - w.unique()),
                Math.max(0, w.unique() - credits), ready(w.queue() + ".dlq"), left, seconds);
    }

    private ChildJvm start(String service, Workload w, String name, int consumers, int prefetch) throws Exception {
        ChildJvm child = ChildJvm.of(PeerChild.class.getName()).classpath(classpath)
                .log(Path.of("target", "peer-logs"), w.label() + "-" + System.nanoTime())
                .args(List.of(service, w.queue(), db.schema(), name, String.valueOf(consumers),
                        String.valueOf(prefetch)))
                .start();
        if (child.awaitLine("READY", Duration.ofSeconds(60)).isEmpty()) {
            child.close();
            throw new IllegalStateException(service + " did not start; log: " + child.log());
        }
        return child;
    }

    private long credited(BigDecimal before) throws Exception {
        return db.sumOfBalances().subtract(before).divide(Workload.AMOUNT).longValueExact();
    }

    /** Messages ready in {@code queue} (not those delivered and unacked). */
    long ready(String queue) throws Exception {
        ConnectionFactory f = new ConnectionFactory();
        f.setUri(rabbitUri);
        try (Connection c = f.newConnection("idemkit-bench-peer-kills"); Channel ch = c.createChannel()) {
            return ch.queueDeclarePassive(queue).getMessageCount();
        }
    }

    /** This JVM's class path: exec:java's class loader's, else {@code java.class.path}. */
    private static String classpath() {
        List<String> entries = new ArrayList<>();
        for (ClassLoader cl = PeerKills.class.getClassLoader(); cl != null; cl = cl.getParent()) {
            if (cl instanceof URLClassLoader u) {
                for (URL url : u.getURLs()) {
                    try {
                        entries.add(Path.of(url.toURI()).toString());
                    } catch (URISyntaxException e) {
                        throw new IllegalStateException(e);
                    }
                }
            }
        }
        return entries.isEmpty() ? System.getProperty("java.class.path") : String.join(File.pathSeparator, entries);
    }
}
