package dev.idemkit.benchmarks.spring.kafka;

import dev.idemkit.adapters.kafka.KafkaBroker;
import dev.idemkit.adapters.kafka.KafkaMessageTransport;
import dev.idemkit.adapters.kafka.KafkaSettings;
import dev.idemkit.benchmarks.spring.BenchResults;
import dev.idemkit.testsupport.ChildJvm;
import dev.idemkit.testsupport.MidStreamKills;
import dev.idemkit.testsupport.Names;
import dev.idemkit.testsupport.TestPostgres;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;

/**
 * The kill comparison of the Kafka listener services (issue 33 item 4): each variant's service ({@link KafkaServiceChild},
 * a JVM of its own, the same properties as in {@link SpringKafkaListenerBenchmark}) consumes the same pre-published
 * topic (30 % of the records repeat an earlier id) with its own consumer group, and is SIGKILLed mid-stream the same way
 * ({@link MidStreamKills}), restarted each time, until a last instance drains the rest (the group's lag 0). Every
 * distinct record credits an account of its own by 1, so the balances say exactly what was lost (0) and what was
 * applied twice (above 1).
 *
 * <pre>./mvnw -q -pl benchmarks-spring exec:java -Dexec.mainClass=dev.idemkit.benchmarks.spring.kafka.SpringKafkaPeerKills</pre>
 * Properties: {@code bench.kill.messages} (3000), {@code bench.kills} (3), {@code bench.kill.consumers} (4),
 * {@code bench.duplicates} (0.3), {@code bench.kill.variants} (idemkit,hand-written,retryable-topic).
 */
public final class SpringKafkaPeerKills {
    private SpringKafkaPeerKills() {}

    public static void main(String[] args) throws Exception {
        BenchResults.KillOptions o = BenchResults.KillOptions.fromSystemProperties(
                "idemkit,hand-written,retryable-topic");
        List<String> variants = o.variants();
        variants.forEach(SpringKafkaListenerBenchmark::config); // an unknown name fails before anything starts
        KafkaSettings settings = KafkaBroker.shared().settings()
                .withPartitions(SpringKafkaListenerBenchmark.PARTITIONS);
        StringBuilder table = new StringBuilder(String.format(Locale.ROOT, "| service | SIGKILLs | distinct records"
                + " | applied twice | lost | not committed | seconds |%n|---|---|---|---|---|---|---|%n"));
        boolean idemkitExact = true;
        Properties adminProps = new Properties();
        adminProps.put("bootstrap.servers", settings.bootstrapServers());
        try (KafkaMessageTransport producer = new KafkaMessageTransport(settings);
                Admin admin = Admin.create(adminProps)) {
            for (String v : variants) {
                String[] row = run(producer, admin, v, o.messages(), o.duplicates(), o.consumers(), o.kills());
                System.out.println("kafka-kills " + String.join(" ", row));
                table.append("| ").append(String.join(" | ", row)).append(" |\n");
                if (v.equals("idemkit")) {
                    idemkitExact = row[3].equals("0") && row[4].equals("0") && row[5].equals("0");
                }
            }
        }
        System.out.println();
        System.out.print(table);
        System.out.println(idemkitExact ? "kafka-kills: idemkit exact after every kill"
                : "kafka-kills: idemkit was NOT exact");
        System.exit(idemkitExact ? 0 : 1); // the shared broker's JVM is stopped by its shutdown hook
    }

    private static String[] run(KafkaMessageTransport producer, Admin admin, String variant, int messages,
            double duplicates, int consumers, int kills) throws Exception {
        String schema = TestPostgres.uniqueSchema("idemkit_bench_kafka_kill");
        String topic = KafkaBroker.uniqueTopic("bench-kafka-kill-" + variant);
        String group = "bench-kill-" + Names.tag(8);
        BenchResults.PerMessageStream stream = BenchResults.PerMessageStream.of(messages, duplicates, 42);
        int unique = stream.unique();
        SpringKafkaListenerBenchmark.createSchema(schema, stream.accounts());
        try (java.sql.Connection poll = TestPostgres.connect()) {
            producer.declare(topic);
            SpringKafkaListenerBenchmark.publish(producer, topic, stream.messages());
            List<String> childArgs = new ArrayList<>(List.of(variant));
            childArgs.addAll(SpringKafkaListenerBenchmark.properties(variant, consumers, schema, topic, group,
                    producer.settings().bootstrapServers()));
            String classpath = MidStreamKills.classpath(SpringKafkaPeerKills.class);
            // quiet for 5 s: longer than a @RetryableTopic back-off (1 s, then 2 s) before the last child is stopped
            double seconds = MidStreamKills.run(() -> start(classpath, variant, childArgs),
                    () -> BenchResults.accounts(poll, schema, "balance > 0"),
                    () -> SpringKafkaListenerBenchmark.lag(admin, group, topic), unique, kills,
                    Duration.ofSeconds(5), Duration.ofSeconds(180));
            return new String[] {variant, Integer.toString(kills), Integer.toString(unique),
                    Long.toString(BenchResults.accounts(poll, schema, "balance > 1")),
                    Long.toString(BenchResults.accounts(poll, schema, "balance = 0")),
                    Long.toString(SpringKafkaListenerBenchmark.lag(admin, group, topic)),
                    String.format(Locale.ROOT, "%.1f", seconds)};
        } finally {
            TestPostgres.dropSchema(schema);
            producer.deleteTopics(topic);
        }
    }

    private static ChildJvm start(String classpath, String variant, List<String> args) throws Exception {
        return MidStreamKills.startReady(KafkaServiceChild.class.getName(), classpath,
                "kafka-" + variant + "-" + Names.tag(8), args, Duration.ofSeconds(90));
    }
}
