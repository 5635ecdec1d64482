package dev.idemkit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.adapters.postgres.PostgresSettings;
import dev.idemkit.domain.Outcome;
import dev.idemkit.spring.jpasample.JpaSampleService;
import dev.idemkit.spring.jpasample.Wallets;
import java.sql.Connection;
import dev.idemkit.testsupport.TestPostgres;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.UnexpectedRollbackException;

/**
 * The inbox in a JPA service (Boot's JpaTransactionManager, entities changed through the EntityManager), against the
 * local PostgreSQL in a schema of its own: the key commits with the entity change, and an effect that failed after
 * changing an entity cannot commit that change without its key, even when the service catches the failure.
 */
@SpringBootTest(classes = JpaSampleService.class, webEnvironment = SpringBootTest.WebEnvironment.NONE)
class JpaSampleServiceIT {
    private static final String SCHEMA = TestPostgres.uniqueSchema("idemkit_jpa");
    private static final PostgresSettings PG = PostgresSettings.fromEnvironment();

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) throws Exception {
        try (Connection c = TestPostgres.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + SCHEMA); // Hibernate creates the wallets table in it at start-up
        }
        String url = PG.url() + (PG.url().contains("?") ? "&" : "?") + "currentSchema=" + SCHEMA;
        registry.add("spring.datasource.url", () -> url);
        registry.add("spring.datasource.username", PG::user);
        registry.add("spring.datasource.password", PG::password);
        registry.add("spring.jpa.hibernate.ddl-auto", () -> "update");
        registry.add("idemkit.postgres.schema", () -> SCHEMA);
        registry.add("spring.autoconfigure.exclude", () -> "org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration");
    }

    @AfterAll
    static void dropSchema() {
        TestPostgres.dropSchema(SCHEMA);
    }

    @Autowired
    Wallets wallets;
    @Autowired
    JdbcTemplate jdbc;
    @Autowired
    PlatformTransactionManager transactions;

    private String wallet() {
        String id = "w-" + UUID.randomUUID();
        wallets.open(id);
        return id;
    }

    private long keys(String messageId) {
        return jdbc.queryForObject("SELECT count(*) FROM processed_messages WHERE consumer = 'wallets' AND message_id = ?",
                Long.class, messageId);
    }

    @Test
    void itRunsUnderBootsJpaTransactionManager() {
        assertThat(transactions.getClass().getName()).isEqualTo("org.springframework.orm.jpa.JpaTransactionManager");
    }

    @Test
    void theSameMessageThreeTimesChangesTheEntityOnce() {
        String wallet = wallet();
        String id = UUID.randomUUID().toString();
        List<Outcome> outcomes = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            outcomes.add(wallets.credit(id, "b", wallet, 25));
        }
        assertThat(outcomes).containsExactly(Outcome.PROCESSED, Outcome.DUPLICATE, Outcome.DUPLICATE);
        assertThat(wallets.balance(wallet)).isEqualTo(25);
        assertThat(keys(id)).isEqualTo(1);
    }

    @Test
    void anEffectThatFailedAfterChangingAnEntityCannotCommitThatChangeEvenWhenTheServiceCatchesIt() {
        String wallet = wallet();
        String id = UUID.randomUUID().toString();
        assertThatThrownBy(() -> wallets.creditCatchingTheEffectsFailure(id, "b", wallet, 40))
                .as("the transaction was marked rollback-only: Spring says so at the commit")
                .isInstanceOf(UnexpectedRollbackException.class);
        assertThat(wallets.balance(wallet)).as("the effect's entity change").isZero();
        assertThat(keys(id)).isZero();
        assertThat(wallets.credit(id, "b", wallet, 40)).as("the redelivery").isEqualTo(Outcome.PROCESSED);
        assertThat(wallets.balance(wallet)).isEqualTo(40);
    }
}
