package dev.idemkit.benchmarks.spring;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.idemkit.adapters.rabbit.RabbitAdoptedDeliveries;
import dev.idemkit.testsupport.ChildJvm;
import dev.idemkit.testsupport.MidStreamKills;
import dev.idemkit.testsupport.Names;
import dev.idemkit.testsupport.TestPostgres;
import dev.idemkit.testsupport.TestRabbit;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;

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
        int messages = Integer.getInteger("bench.kill.messages", 3000);
        int kills = Integer.getInteger("bench.kills", 3);
        int consumers = Integer.getInteger("bench.kill.consumers", 4);
        double duplicates = Double.parseDouble(System.getProperty("bench.duplicates", "0.3"));
        List<String> variants = Arrays.stream(System.getProperty("bench.kill.variants",
                "idemkit,spring-integration,hand-written").split(",")).map(String::trim).toList();
        variants.forEach(SpringListenerBenchmark::config); // an unknown name fails before anything starts
        StringBuilder table = new StringBuilder(String.format(Locale.ROOT, "| service | SIGKILLs | distinct messages"
                + " | applied twice | lost | dead-lettered | left in queue | seconds |%n|---|---|---|---|---|---|---|---|%n"));
        boolean idemkitExact = true;
        try (Connection rabbit = TestRabbit.rawConnection("idemkit-bench-spring-kills")) {
            for (String v : variants) {
                String[] row = run(rabbit, v, messages, duplicates, consumers, kills);
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
        int unique = 0;
        List<String[]> stream = new ArrayList<>(messages);
        Random random = new Random(42);
        String tag = Names.tag(8);
        for (int i = 0; i < messages; i++) {
            if (i > 0 && random.nextDouble() < duplicates) {
                stream.add(stream.get(random.nextInt(stream.size())));
            } else {
                stream.add(new String[] {tag + "-" + unique, "k" + unique + ":1"});
                unique++;
            }
        }
        SpringListenerBenchmark.createSchema(schema, "SELECT 'k' || g, 0 FROM generate_series(0, " + (unique - 1)
                + ") g");
        try (java.sql.Connection poll = TestPostgres.connect()) {
            try (Channel ch = rabbit.createChannel()) {
                ch.queueDeclare(queue, true, false, false, RabbitAdoptedDeliveries.workQueueArguments(queue));
            }
            SpringListenerBenchmark.publish(rabbit, queue, stream);
            List<String> props = SpringListenerBenchmark.properties(variant, consumers, schema, queue, null);
            List<String> childArgs = new ArrayList<>(List.of(variant));
            childArgs.addAll(props);
            String classpath = MidStreamKills.classpath(SpringPeerKills.class);
            double seconds = MidStreamKills.run(() -> start(classpath, variant, childArgs),
                    () -> count(poll, schema, "balance > 0"), () -> ready(rabbit, queue), unique, kills,
                    Duration.ofSeconds(2), Duration.ofSeconds(180));
            return new String[] {variant, Integer.toString(kills), Integer.toString(unique),
                    Long.toString(count(poll, schema, "balance > 1")), Long.toString(count(poll, schema, "balance = 0")),
                    Long.toString(readyOrZero(rabbit, queue + ".dlq")), Long.toString(ready(rabbit, queue)),
                    String.format(Locale.ROOT, "%.1f", seconds)};
        } finally {
            TestPostgres.dropSchema(schema);
            SpringListenerBenchmark.deleteQueues(queue);
        }
    }

    private static ChildJvm start(String classpath, String variant, List<String> args) throws Exception {
        ChildJvm child = ChildJvm.of(ServiceChild.class.getName()).classpath(classpath)
                .log(Path.of("target", "peer-logs"), variant + "-" + Names.tag(8)).args(args).start();
        if (child.awaitLine("READY", Duration.ofSeconds(90)).isEmpty()) {
            child.close();
            throw new IllegalStateException(variant + " did not start; log: " + child.log());
        }
        return child;
    }

    private static long count(java.sql.Connection c, String schema, String where) throws Exception {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM " + schema + ".accounts WHERE " + where)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static long ready(Connection rabbit, String queue) throws IOException {
        try (Channel ch = rabbit.createChannel()) {
            return ch.queueDeclarePassive(queue).getMessageCount();
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IOException(e);
        }
    }

    private static long readyOrZero(Connection rabbit, String queue) {
        try {
            return ready(rabbit, queue);
        } catch (IOException e) {
            return 0; // no such queue: nothing was dead-lettered there
        }
    }
}
