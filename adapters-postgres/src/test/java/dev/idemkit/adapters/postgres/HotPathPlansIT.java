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
        "retention: inbox keys | now(), 1000, now()",
        "retention: sent outbox rows | now(), 1000, now()",
        "retention: Idempotency-Key records | 1000",
        "retention: Idempotency-Key records before the run's cutoff | now(), 1000, now()",
    })
    void theCachedPlanReadsTheTableThroughAnIndex(String statement, String args) throws SQLException {
        String plan = genericPlan(sql(statement), args);

        assertThat(plan).as("the generic plan of %s on a new, never analyzed table:%n%s", statement, plan)
                .doesNotContainPattern("Seq Scan on (processed_messages|outbox_messages|idempotency_records)");
        if (retention(sql(statement))) {
            // the age bounds the index scan (a filter would read the whole index), and the delete goes by address
            assertThat(plan).as("the retention batch's plan:%n%s", plan)
                    .containsPattern("Index Cond: \\((processed_at|sent_at|expires_at) <").contains("Tid Scan");
        }
    }

    @org.junit.jupiter.api.Test
    void aRetentionBatchRunsUnderThePlannerSettingTheseCasesAssume() {
        pg.execute("CREATE TABLE IF NOT EXISTS plan_probe (setting text NOT NULL)");
        int n = Sql.purgeBatch(pg.db().dataSource(), "probe",
                "INSERT INTO plan_probe SELECT current_setting('enable_seqscan') || ' '"
                        + " || current_setting('synchronous_commit') || ' ' || current_setting('lock_timeout')", ps -> { });

        assertThat(n).isEqualTo(1);
        assertThat(pg.queryLong("SELECT count(*) FROM plan_probe WHERE setting = 'off off 2s'"))
                .as("no sequential scan, an asynchronous commit, a bounded lock wait").isEqualTo(1);
        assertThat(pg.queryLong("SELECT count(*) FROM plan_probe WHERE current_setting('enable_seqscan') = 'on'"))
                .as("the setting ends with the batch's transaction").isEqualTo(1);
    }

    private static boolean retention(String sql) {
        return sql.startsWith("DELETE") && sql.contains("ctid = ANY");
    }

    private static String sql(String statement) {
        return switch (statement) {
            case "inbox batch: key insert" -> InboxBatch.INSERT_KEYS;
            case "inbox batch: fingerprints of the conflicting keys" -> InboxBatch.SELECT_FINGERPRINTS;
            case "relay: lock the heads" -> RelayPass.LOCK_HEADS;
            case "relay: the rows after the heads" -> RelayPass.FOLLOWERS;
            case "relay: mark sent" -> RelayPass.MARK_SENT;
            case "relay: head scan" -> RelayPass.HEAD_SCAN;
            case "retention: inbox keys" -> PostgresRetention.PURGE_PROCESSED;
            case "retention: sent outbox rows" -> PostgresOutboxMaintenance.PURGE_SENT;
            case "retention: Idempotency-Key records" -> PostgresIdempotencyRecords.PURGE;
            case "retention: Idempotency-Key records before the run's cutoff" -> PostgresRetention.PURGE_EXPIRED_RECORDS;
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
                if (retention(sql)) {
                    Sql.purgePlanner(c); // what Sql.purgeBatch runs first in a retention batch's transaction
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
