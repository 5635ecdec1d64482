package dev.idemkit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.adapters.postgres.PostgresSettings;
import dev.idemkit.domain.Outcome;
import dev.idemkit.spring.jpasample.JpaSampleService;
import dev.idemkit.spring.jpasample.WalletAnnouncements;
import dev.idemkit.spring.jpasample.Wallets;
import dev.idemkit.testsupport.TestRabbit;
import java.net.URI;
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
 * changing an entity cannot commit that change without its key, even when the service catches the failure; an outbox
 * event commits with the entity it announces or not at all, and the relay publishes it.
 */
@SpringBootTest(classes = JpaSampleService.class, webEnvironment = SpringBootTest.WebEnvironment.NONE)
class JpaSampleServiceIT {
    private static final String SCHEMA = TestPostgres.uniqueSchema("idemkit_jpa");
    private static final PostgresSettings PG = PostgresSettings.fromEnvironment();
    private static final String QUEUE = TestRabbit.unique("idemkit-jpa-wallets");

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
        URI rabbit = URI.create(TestRabbit.URI);
        registry.add("spring.rabbitmq.host", rabbit::getHost);
        registry.add("spring.rabbitmq.port", () -> rabbit.getPort() > 0 ? rabbit.getPort() : 5672);
        try (var raw = TestRabbit.rawConnection("idemkit-it-jpa-outbox"); var ch = raw.createChannel()) {
            ch.queueDeclare(QUEUE, true, false, false, null); // the consumer's queue
        }
        registry.add("idemkit.outbox.enabled", () -> "true");
        registry.add("idemkit.outbox.destinations.wallet-opened", () -> QUEUE);
    }

    @AfterAll
    static void dropSchema() throws Exception {
        TestPostgres.dropSchema(SCHEMA);
        try (var raw = TestRabbit.rawConnection("idemkit-it-jpa-outbox"); var ch = raw.createChannel()) {
            ch.queueDelete(QUEUE);
        }
    }

    @Autowired
    WalletAnnouncements announcements;

    @Test
    void aWalletAndItsEventCommitTogetherInAJpaTransactionAndTheRelayPublishesItOnce() throws Exception {
        String id = "w-" + UUID.randomUUID();
        String messageId = announcements.open(id);
        assertThatThrownBy(() -> announcements.openAgain(id)).as("the same wallet again: the insert fails at the"
                + " flush, after the append").isInstanceOf(org.springframework.dao.DataIntegrityViolationException.class);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox_messages WHERE ordering_key = ?", Long.class,
                "wallet-" + id)).as("the first one's event, not the failed one's").isOne();

        try (var raw = TestRabbit.rawConnection("idemkit-it-jpa-outbox"); var ch = raw.createChannel()) {
            com.rabbitmq.client.GetResponse got = org.awaitility.Awaitility.await("the relay's publish")
                    .atMost(java.time.Duration.ofSeconds(30)).until(() -> ch.basicGet(QUEUE, true),
                            java.util.Objects::nonNull);
            assertThat(got.getProps().getMessageId()).isEqualTo(messageId);
            assertThat(new String(got.getBody(), java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("opened:" + id);
            Thread.sleep(500); // a second copy would have been published by now
            assertThat(ch.basicGet(QUEUE, true)).as("published once").isNull();
        }
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
