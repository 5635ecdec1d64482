package dev.idemkit.benchmarks.spring;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.idemkit.adapters.rabbit.RabbitAdoptedDeliveries;
import dev.idemkit.testsupport.ChildJvm;
import dev.idemkit.testsupport.MidStreamKills;
import dev.idemkit.testsupport.Names;
import dev.idemkit.testsupport.TestPostgres;
import dev.idemkit.testsupport.TestRabbit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The kill comparison of the Spring services (issue 33): each variant's service ({@link ServiceChild}, a JVM of its
 * own, the same properties as in {@link SpringListenerBenchmark}) drains the same pre-filled queue and is SIGKILLed
 * mid-stream the same way ({@link MidStreamKills}), restarted each time, until a last instance drains the rest. Every
 * distinct message credits an account of its own by 1, so the balances say exactly what was lost (0) and what was
 * applied twice (above 1).
 *
 * <pre>./mvnw -q -pl benchmarks-spring exec:java -Dexec.mainClass=dev.idemkit.benchmarks.spring.SpringPeerKills</pre>
 * Properties: {@code bench.kill.messages} (3000), {@code bench.kills} (3), {@code bench.kill.consumers} (4),
 * {@code bench.duplicates} (0.3), {@code bench.kill.variants} (idemkit,spring-integration,hand-written).
 */
public final class SpringPeerKills {
    private SpringPeerKills() {}

    public static void main(String[] args) throws Exception {
        BenchResults.KillOptions o = BenchResults.KillOptions.fromSystemProperties("idemkit,spring-integration,hand-written");
        List<String> variants = o.variants();
        variants.forEach(SpringListenerBenchmark::config); // an unknown name fails before anything starts
        StringBuilder table = new StringBuilder(String.format(Locale.ROOT, "| service | SIGKILLs | distinct messages"
                + " | applied twice | lost | dead-lettered | left in queue | seconds |%n|---|---|---|---|---|---|---|---|%n"));
        boolean idemkitExact = true;
        try (Connection rabbit = TestRabbit.rawConnection("idemkit-bench-spring-kills")) {
            for (String v : variants) {
                String[] row = run(rabbit, v, o.messages(), o.duplicates(), o.consumers(), o.kills());
                System.out.println("spring-kills " + String.join(" ", row));
                table.append("| ").append(String.join(" | ", row)).append(" |\n");
                if (v.equals("idemkit")) {
                    idemkitExact = row[3].equals("0") && row[4].equals("0") && row[5].equals("0") && row[6].equals("0");
                }
            }
        }
        System.out.println();
        System.out.print(table);
        System.out.println(idemkitExact ? "spring-kills: idemkit exact after every kill"
                : "spring-kills: idemkit was NOT exact");
        System.exit(idemkitExact ? 0 : 1);
    }

    private static String[] run(Connection rabbit, String variant, int messages, double duplicates, int consumers,
            int kills) throws Exception {
        String schema = TestPostgres.uniqueSchema("idemkit_bench_spring");
        String queue = TestRabbit.unique("idemkit.bench.spring.kill");
        BenchResults.PerMessageStream stream = BenchResults.PerMessageStream.of(messages, duplicates, 42);
        int unique = stream.unique();
        SpringListenerBenchmark.createSchema(schema, stream.accounts());
        try (java.sql.Connection poll = TestPostgres.connect()) {
            try (Channel ch = rabbit.createChannel()) {
                ch.queueDeclare(queue, true, false, false, RabbitAdoptedDeliveries.workQueueArguments(queue));
            }
            SpringListenerBenchmark.publish(rabbit, queue, stream.messages());
            List<String> props = SpringListenerBenchmark.properties(variant, consumers, schema, queue, null);
            List<String> childArgs = new ArrayList<>(List.of(variant));
            childArgs.addAll(props);
            String classpath = MidStreamKills.classpath(SpringPeerKills.class);
            double seconds = MidStreamKills.run(() -> start(classpath, variant, childArgs),
                    () -> BenchResults.accounts(poll, schema, "balance > 0"),
                    () -> TestRabbit.messageCount(rabbit, queue), unique, kills, Duration.ofSeconds(2),
                    Duration.ofSeconds(180));
            return new String[] {variant, Integer.toString(kills), Integer.toString(unique),
                    Long.toString(BenchResults.accounts(poll, schema, "balance > 1")),
                    Long.toString(BenchResults.accounts(poll, schema, "balance = 0")),
                    Long.toString(TestRabbit.readyOrZero(rabbit, queue + ".dlq")),
                    Long.toString(TestRabbit.messageCount(rabbit, queue)),
                    String.format(Locale.ROOT, "%.1f", seconds)};
        } finally {
            TestPostgres.dropSchema(schema);
            SpringListenerBenchmark.deleteQueues(queue);
        }
    }

    private static ChildJvm start(String classpath, String variant, List<String> args) throws Exception {
        return MidStreamKills.startReady(ServiceChild.class.getName(), classpath,
                variant + "-" + Names.tag(8), args, Duration.ofSeconds(90));
    }
}
