package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.inbox.InboxKey;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The pool's connections stay on the schema whatever their first transaction does. A search path set with a
 * statement on a connection whose auto-commit is off is part of its first transaction: when that transaction rolls
 * back (an effect that threw, a duplicate), the connection silently falls back to {@code "$user", public}, and every
 * later statement on it fails with "relation does not exist" (or, worse, reads and writes another schema's tables
 * of the same names). Found by the crash harness's PostgreSQL restart: every connection was new.
 */
class SearchPathIT {
    private static TestDatabase pg;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start();
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    private static PostgresSettings settings() {
        return PostgresSettings.fromEnvironment().withSchema(pg.schema()).withPoolSize(1);
    }

    @Test
    void aConnectionWhoseFirstTransactionRolledBackIsStillOnTheSchema() throws Exception {
        try (HikariDataSource pool = PostgresDatabase.createPool(settings())) {
            try (Connection c = pool.getConnection()) {
                c.rollback();
            }
            try (Connection c = pool.getConnection(); Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT current_schema()")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo(pg.schema());
                c.rollback();
            }
        }
    }

    @Test
    void afterAFailingEffectOnAFreshConnectionTheNextDeliveryStillFindsTheInbox() {
        try (HikariDataSource pool = PostgresDatabase.createPool(settings().withPoolSize(2));
                PostgresDatabase db = PostgresDatabase.builder(settings()).dataSource(pool).start()) {
            pool.getHikariPoolMXBean().softEvictConnections(); // the next transaction runs on a new connection
            PostgresInboxStore inbox = new PostgresInboxStore(db);
            InboxKey key = InboxKey.of("search-path-" + UUID.randomUUID(), "m-1");

            assertThatThrownBy(() -> inbox.runOnce(key, Fingerprint.of("b"), work -> {
                throw new IllegalStateException("the effect failed: its first transaction rolls back");
            })).isInstanceOf(IllegalStateException.class);

            assertThat(inbox.runOnce(key, Fingerprint.of("b"), work -> null).outcome().effectRan()).isTrue();
            assertThat(inbox.recorded(key)).isPresent();
        }
    }
}
