package dev.idemkit.benchmarks;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.idemkit.testsupport.ChildJvm;
import dev.idemkit.testsupport.MidStreamKills;
import java.net.URI;
import java.time.Duration;
import java.util.List;

/**
 * The kill comparison of the peers suite: one service's consuming process ({@link PeerChild}, a JVM of its own) drains
 * a pre-filled queue and is SIGKILLed mid-stream ({@link MidStreamKills}: when a further share of the distinct credits
 * has been applied), restarted each time; a last process drains the rest and is stopped once the queue is empty and
 * the balances stayed the same for two seconds. The same kills for every service. The workload is
 * {@link Workload#perMessage}'s: every distinct message credits an account of its own, so what was lost and what was
 * applied twice are counted per message.
 */
final class PeerKills {
    /**
     * @param twice distinct messages whose credit was applied more than once
     * @param missing distinct messages whose credit was never applied
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

    /** Runs the kills over {@code w}, a {@link Workload#perMessage} workload over the accounts {@code accountPrefix...}. */
    Outcome run(String service, Workload w, String accountPrefix, int consumers, int prefetch, int kills)
            throws Exception {
        db.createAccounts(accountPrefix, (int) w.unique());
        String name = "bench-" + w.label();
        try (java.sql.Connection poll = db.connect()) {
            double seconds = MidStreamKills.run(() -> start(service, w, name, consumers, prefetch),
                    () -> w.unique() - db.neverAndTwice(poll, accountPrefix, Workload.AMOUNT)[0],
                    () -> ready(w.queue()), w.unique(), kills, Duration.ofSeconds(2), Duration.ofSeconds(180));
            long[] neverAndTwice = db.neverAndTwice(poll, accountPrefix, Workload.AMOUNT);
            return new Outcome(kills, w.unique(), neverAndTwice[1], neverAndTwice[0], ready(w.queue() + ".dlq"),
                    ready(w.queue()), seconds);
        }
    }

    private ChildJvm start(String service, Workload w, String name, int consumers, int prefetch) throws Exception {
        return MidStreamKills.startReady(PeerChild.class.getName(), classpath, w.label() + "-" + System.nanoTime(),
                List.of(service, w.queue(), db.schema(), name, String.valueOf(consumers), String.valueOf(prefetch)),
                Duration.ofSeconds(60));
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
