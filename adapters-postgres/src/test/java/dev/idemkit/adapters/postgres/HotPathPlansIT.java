package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The statements run per batch, per relay pass or per retention batch reach their table through its indexes even in a
 * generic plan made without statistics. pgjdbc prepares a statement on the server after 5 runs, and PostgreSQL may
 * then keep a generic plan until the table's statistics change (its first ANALYZE, by autovacuum a minute or more into
 * a new, busy table). In a new schema that plan is made on an empty, never analyzed table, where a join of an array
 * with the table comes out as a hash join over a sequential scan. The batched inbox's fingerprint read did so: it read
 * the whole inbox once per batch, 11.5 million rows for 300 batches in BatchCeiling (benchmarks/BENCHMARKS.md). Each
 * statement is prepared here as the store sends it, on a fresh schema, with the generic plan forced, and may not scan
 * its table. The retention batches run under the setting they are sent with ({@link Sql#PURGE_PLANNER}).
 */
class HotPathPlansIT {
    private static TestDatabase pg;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start(2);
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "inbox batch: key insert | ARRAY['c','c'], ARRAY['a','b'], ARRAY['f','g']",
        "inbox batch: fingerprints of the conflicting keys | ARRAY['c','c'], ARRAY['a','b']",
        "relay: lock the heads | ARRAY[1,2]::bigint[], now()",
        "relay: the rows after the heads | ARRAY['k1','k2'], ARRAY[1,2]::bigint[], 10",
        "relay: mark sent | now(), ARRAY[1,2]::bigint[]",
        "relay: head scan | '', now(), 10",
        "retention: inbox keys | now(), 1000",
        "retention: sent outbox rows | now(), 1000",
        "retention: Idempotency-Key records | 1000",
    })
    void theCachedPlanReadsTheTableThroughAnIndex(String statement, String args) throws SQLException {
        String plan = genericPlan(sql(statement), args);

        assertThat(plan).as("the generic plan of %s on a new, never analyzed table:%n%s", statement, plan)
                .doesNotContainPattern("Seq Scan on (processed_messages|outbox_messages|idempotency_records)");
    }

    private static String sql(String statement) {
        return switch (statement) {
            case "inbox batch: key insert" -> InboxBatch.INSERT_KEYS;
            case "inbox batch: fingerprints of the conflicting keys" -> InboxBatch.SELECT_FINGERPRINTS;
            case "relay: lock the heads" -> PostgresOutboxStore.LOCK_HEADS;
            case "relay: the rows after the heads" -> PostgresOutboxStore.FOLLOWERS;
            case "relay: mark sent" -> PostgresOutboxStore.MARK_SENT;
            case "relay: head scan" -> PostgresOutboxStore.HEAD_SCAN;
            case "retention: inbox keys" -> PostgresRetention.PURGE_PROCESSED;
            case "retention: sent outbox rows" -> PostgresOutboxMaintenance.PURGE_SENT;
            case "retention: Idempotency-Key records" -> PostgresIdempotencyRecords.PURGE;
            default -> throw new IllegalArgumentException(statement);
        };
    }

    /** EXPLAIN of {@code sql} prepared with its {@code ?} numbered, the generic plan forced, executed with {@code args}. */
    private static String genericPlan(String sql, String args) throws SQLException {
        StringBuilder numbered = new StringBuilder();
        int n = 0;
        for (char ch : sql.toCharArray()) {
            numbered.append(ch == '?' ? "$" + ++n : String.valueOf(ch));
        }
        try (Connection c = pg.connection(); Statement st = c.createStatement()) {
            try {
                if (sql.startsWith("DELETE") && sql.contains("ctid = ANY")) {
                    st.execute(Sql.PURGE_PLANNER); // a retention batch runs under it (Sql.purgeBatch)
                }
                st.execute("SET plan_cache_mode = force_generic_plan");
                st.execute("PREPARE hot AS " + numbered);
                try (ResultSet rs = st.executeQuery("EXPLAIN EXECUTE hot(" + args + ")")) {
                    StringBuilder plan = new StringBuilder();
                    while (rs.next()) {
                        plan.append(rs.getString(1)).append('\n');
                    }
                    return plan.toString();
                }
            } finally {
                c.rollback();
                st.execute("DEALLOCATE ALL");
                st.execute("RESET plan_cache_mode");
                c.commit();
            }
        }
    }
}
