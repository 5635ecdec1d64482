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
}
