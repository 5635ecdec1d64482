package dev.idemkit.app.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idemkit.app.CreditPlan;
import dev.idemkit.app.TestEnvironment;
import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.app.wiring.ConsumerKind;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import dev.idemkit.ports.out.TransportException;
import dev.idemkit.ports.service.BatchingConsumer;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Two serve-like instances ({@link Assembly}) on one PostgreSQL schema, both publishing to and consuming one queue or
 * topic of a cluster that loses nodes ({@link #acrossKills}): publishing as an at-least-once producer does, what the
 * instances decided, the inbox's rows, the totals, and the report the cluster tests write. The RabbitMQ and the Kafka
 * cluster tests differ only in their {@link Nodes}.
 */
final class ClusterStream {
    static final Duration PATIENCE = Duration.ofSeconds(180);
    private static final int PUBLISHERS = 4;

    private final Assembly first;
    private final Assembly second;
    private final String queue;
    private final String schema;

    ClusterStream(Assembly first, Assembly second, String queue, String schema) {
        this.first = first;
        this.second = second;
        this.queue = queue;
        this.schema = schema;
    }

    /** What a cluster test does to its nodes while the stream runs. */
    interface Nodes {
        /** The node that leads the work queue or partition now (before the stream, and after a restart). */
        int leader() throws Exception;

        /** Kill -9 of {@code node}, the {@code k}th kill; returns what the report says of it. */
        String kill(int node, int k, long processedAtKill) throws Exception;

        /** Brings {@code node} back, able to lose another node afterwards. */
        void restart(int node) throws Exception;

        /** Work not settled yet (0 when every delivery is acked, retried or dead-lettered). */
        long pending() throws Exception;

        /** Dead letters in the work's dead-letter queue. */
        long deadLettered() throws Exception;
    }

    /**
     * The test: {@code credits} published through both instances, one consuming a delivery per transaction, one
     * batched; the node leading the work killed {@code kills} times at evenly spaced shares of the distinct credits
     * (restarted in between); then every account's balance is exactly the sum over distinct ids, each distinct id
     * processed once, nothing dead-lettered, nothing pending. Writes the report {@code target/<reportName>.md} and
     * returns the node killed last (still down).
     */
    int acrossKills(CreditPlan credits, int kills, Nodes nodes, String reportName) throws Exception {
        List<OutgoingMessage> plan = credits.messages();
        Map<String, BigDecimal> expected = credits.expectedBalances();
        long distinct = credits.distinct();

        Subscription a = first.transport().subscribe(queue, first.consumer(ConsumerKind.CREDIT_ACCOUNT));
        BatchingConsumer<?> batched = second.batchedConsumer(ConsumerKind.CREDIT_ACCOUNT,
                BatchingConsumer.BatchSettings.defaults().withMaxBatch(50));
        Subscription b = second.transport().subscribe(queue, batched);
        StreamProgress progress = new StreamProgress(this::processed);
        List<String> killed = new ArrayList<>();
        int lastKilled = 0;
        long began = System.nanoTime();
        ExecutorService publishers = Executors.newFixedThreadPool(PUBLISHERS);
        try {
            int leader = nodes.leader();
            // the plan's tail goes out only after the last kill: the stream goes on across every kill by construction,
            // however fast the consumers catch up while a killed node restarts (a full run saw them finish first)
            int tailFrom = plan.size() - plan.size() / (kills + 2);
            List<Future<Long>> publishing = new ArrayList<>(publish(publishers, plan.subList(0, tailFrom)));
            for (int k = 1; k <= kills; k++) {
                long share = distinct * k / (kills + 1);
                await().atMost(PATIENCE).pollInterval(Duration.ofMillis(1)).until(() -> processed() >= share);
                progress.killedAt(System.nanoTime());
                long processedAtKill = (long) processed();
                killed.add(nodes.kill(leader, k, processedAtKill) + " at " + processedAtKill + " of " + distinct
                        + " processed");
                lastKilled = leader;
                assertThat(processedAtKill).as("killed mid-stream (the plan's tail is still to come)")
                        .isLessThan(distinct);
                if (k < kills) {
                    nodes.restart(leader); // back before the next kill, so that a quorum survives it
                    leader = nodes.leader();
                }
            }
            publishing.addAll(publish(publishers, plan.subList(tailFrom, plan.size())));
            long publishRetries = 0;
            for (Future<Long> f : publishing) {
                publishRetries += f.get();
            }
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(200)).until(() -> processed() >= distinct
                    && nodes.pending() == 0);
            long drained = System.nanoTime();
            progress.stop();

            assertThat(credits.balances(schema)).isEqualTo(expected);
            assertThat(processedRows()).as("inbox rows: each distinct id once").isEqualTo(distinct);
            assertThat(processed()).as("effects run, over both instances").isEqualTo(distinct);
            assertThat(decisions("duplicate")).as("duplicates recognised")
                    .isGreaterThanOrEqualTo(plan.size() - distinct);
            assertThat(decisions("dead-lettered")).isZero();
            assertThat(nodes.deadLettered()).as("nothing dead-lettered").isZero();
            report(reportName, plan.size(), distinct, kills, progress, publishRetries, drained - began, killed);
            return lastKilled;
        } finally {
            publishers.shutdownNow();
            progress.stop();
            a.close();
            batched.close();
            b.close();
        }
    }

    /**
     * Interleaved slices of {@code plan} through both instances, one thread each; a publish that fails (its
     * node died, the client is finding the new leader) is sent again with the same id until the broker confirms it.
     * Each future returns its number of such retries.
     */
    private List<Future<Long>> publish(ExecutorService pool, List<OutgoingMessage> plan) {
        List<Future<Long>> done = new ArrayList<>();
        for (int t = 0; t < PUBLISHERS; t++) {
            int slice = t;
            Assembly via = t % 2 == 0 ? first : second;
            done.add(pool.submit(() -> {
                long retries = 0;
                for (int i = slice; i < plan.size(); i += PUBLISHERS) {
                    long deadline = System.nanoTime() + PATIENCE.toNanos();
                    while (true) {
                        try {
                            via.transport().publish(queue, plan.get(i));
                            break;
                        } catch (TransportException e) {
                            if (System.nanoTime() > deadline) {
                                throw e;
                            }
                            retries++;
                            Thread.sleep(50);
                        }
                    }
                }
                return retries;
            }));
        }
        return done;
    }

    double processed() {
        return decisions("processed");
    }

    /** How many deliveries both instances decided {@code decision} about. */
    double decisions(String decision) {
        return first.metrics().count("idemkit_messages", "decision", decision)
                + second.metrics().count("idemkit_messages", "decision", decision);
    }

    /** The credit consumer's inbox rows. */
    private long processedRows() {
        return TestEnvironment.inboxRows(schema, "account-credit");
    }

    /** The run's table row, printed and written to {@code target/<name>.md}. */
    private void report(String name, int messages, long distinct, int kills, StreamProgress progress, long publishRetries,
            long nanos, List<String> killed) throws Exception {
        String report = "| messages | distinct | duplicates in plan | kills | longest pause after a kill | "
                + "duplicates seen | publish retries | wall time | totals |\n|---|---|---|---|---|---|---|---|---|\n"
                + "| " + messages + " | " + distinct + " | " + (messages - distinct) + " | " + kills + " | "
                + progress.longestAfterKillMillis() + " ms (before the first kill: "
                + progress.longestBeforeKillMillis() + " ms) | " + (long) decisions("duplicate") + " | "
                + publishRetries + " | " + String.format("%.1f s", nanos / 1e9) + " | exact |\n\n"
                + "killed: " + String.join("; ", killed) + "\n";
        System.out.println(name + ":\n" + report);
        Files.writeString(Path.of("target", name + ".md"), report, StandardCharsets.UTF_8);
    }
}
