package dev.idemkit.benchmarks;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.idemkit.testsupport.ChildJvm;
import dev.idemkit.testsupport.MidStreamKills;
import java.math.BigDecimal;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The kill comparison of the peers suite: one service's consuming process ({@link PeerChild}, a JVM of its own) drains
 * a pre-filled queue and is SIGKILLed mid-stream ({@link MidStreamKills}: when a further share of the distinct credits
 * has been applied), restarted each time; a last process drains the rest and is stopped once the queue is empty and
 * the balances stayed the same for two seconds. The same kills for every service.
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
        this.classpath = MidStreamKills.classpath(PeerKills.class);
    }

    Outcome run(String service, Workload w, int consumers, int prefetch, int kills) throws Exception {
        BigDecimal before = db.sumOfBalances();
        String name = "bench-" + w.label();
        double seconds = MidStreamKills.run(() -> start(service, w, name, consumers, prefetch), () -> credited(before),
                () -> ready(w.queue()), w.unique(), kills, Duration.ofSeconds(2), Duration.ofSeconds(180));
        long credits = credited(before);
        return new Outcome(kills, w.unique(), Math.max(0, credits - w.unique()), Math.max(0, w.unique() - credits),
                ready(w.queue() + ".dlq"), ready(w.queue()), seconds);
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
}
