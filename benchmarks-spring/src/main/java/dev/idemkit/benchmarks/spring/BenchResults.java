package dev.idemkit.benchmarks.spring;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** What the Spring listener benchmarks share: the credited total they wait for, and how rounds are reported. */
public final class BenchResults {
    private BenchResults() {}

    /**
     * A Spring property that keeps Spring Modulith's event publication registry and externalization out of a service:
     * the module's dependencies are here for the Modulith peer only, and every other service runs as it would without
     * them.
     */
    public static final String NO_MODULITH = "spring.autoconfigure.exclude="
            + "org.springframework.modulith.events.config.EventPublicationAutoConfiguration,"
            + "org.springframework.modulith.events.config.EventExternalizationAutoConfiguration,"
            + "org.springframework.modulith.events.jdbc.JdbcEventPublicationAutoConfiguration,"
            + "org.springframework.modulith.events.kafka.KafkaEventExternalizerConfiguration,"
            + "org.springframework.modulith.events.kafka.KafkaJacksonConfiguration,"
            + "org.springframework.modulith.events.kafka.KafkaJackson2Configuration,"
            + "org.springframework.modulith.events.jackson.JacksonEventSerializationConfiguration,"
            + "org.springframework.modulith.events.jackson2.Jackson2EventSerializationConfiguration,"
            + "org.springframework.modulith.moments.autoconfigure.MomentsAutoConfiguration,"
            + "org.springframework.modulith.core.config.ApplicationModuleInitializerRuntimeVerification";

    /** The sum of the accounts' balances in {@code schema}. */
    public static long total(Connection c, String schema) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT coalesce(sum(balance), 0) FROM " + schema + ".accounts")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * How many accounts of {@code schema} match {@code where} (a fixed condition of the caller's, such as
     * {@code balance > 1}: the kill comparisons' per-message accounts applied twice).
     */
    public static long accounts(Connection c, String schema, String where) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM " + schema + ".accounts WHERE " + where)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** Each round's ratio of {@code xs} to {@code base}, as "0.91, 1.02, ...". */
    public static String ratios(List<Double> xs, List<Double> base) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < xs.size(); i++) {
            out.append(i == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.2f", xs.get(i) / base.get(i)));
        }
        return out.toString();
    }

    public static double median(List<Double> xs) {
        List<Double> sorted = new ArrayList<>(xs);
        sorted.sort(null);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    /**
     * The kill comparisons' stream: {@code messages} messages {@code {id, "k<n>:1"}}, each distinct one crediting an
     * account of its own ({@code k0}, {@code k1}, ...) by 1, and a share {@code duplicates} repeating an earlier one.
     *
     * @param unique the distinct messages, i.e. the accounts {@code k0} to {@code k(unique - 1)}
     */
    public record PerMessageStream(List<String[]> messages, int unique) {
        public static PerMessageStream of(int messages, double duplicates, long seed) {
            List<String[]> stream = new ArrayList<>(messages);
            java.util.Random random = new java.util.Random(seed);
            String tag = dev.idemkit.testsupport.Names.tag(8);
            int unique = 0;
            for (int i = 0; i < messages; i++) {
                if (i > 0 && random.nextDouble() < duplicates) {
                    stream.add(stream.get(random.nextInt(stream.size())));
                } else {
                    stream.add(new String[] {tag + "-" + unique, "k" + unique + ":1"});
                    unique++;
                }
            }
            return new PerMessageStream(List.copyOf(stream), unique);
        }

        /** The query that fills the accounts table with this stream's accounts, each at 0. */
        public String accounts() {
            return "SELECT 'k' || g, 0 FROM generate_series(0, " + (unique - 1) + ") g";
        }
    }

    /**
     * The kill comparisons' settings, from system properties: {@code bench.kill.messages} (3000), {@code bench.kills}
     * (3), {@code bench.kill.consumers} (4), {@code bench.duplicates} (0.3), {@code bench.kill.variants} (the given
     * default).
     */
    public record KillOptions(int messages, int kills, int consumers, double duplicates, List<String> variants) {
        public static KillOptions fromSystemProperties(String defaultVariants) {
            return new KillOptions(Integer.getInteger("bench.kill.messages", 3000), Integer.getInteger("bench.kills", 3),
                    Integer.getInteger("bench.kill.consumers", 4),
                    Double.parseDouble(System.getProperty("bench.duplicates", "0.3")),
                    java.util.Arrays.stream(System.getProperty("bench.kill.variants", defaultVariants).split(","))
                            .map(String::trim).toList());
        }
    }
}
