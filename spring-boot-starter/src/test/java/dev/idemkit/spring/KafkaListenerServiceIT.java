package dev.idemkit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idemkit.adapters.kafka.KafkaBroker;
import dev.idemkit.adapters.kafka.KafkaMessageTransport;
import dev.idemkit.adapters.postgres.PostgresSettings;
import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.ports.out.DeadLetterEntry;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.spring.kafkasample.KafkaSampleService;
import dev.idemkit.testsupport.Names;
import dev.idemkit.testsupport.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The Kafka sample service ({@link KafkaSampleService}: one {@code @KafkaListener} crediting accounts, idempotent by
 * configuration) against the local PostgreSQL and a real Kafka broker, in a schema, a database role, a topic and a
 * consumer group of its own: duplicates credit once, a poison record and a record without an id land in
 * {@code <topic>.dlt} with their reasons while the partition goes on, a failing attempt is retried through the retry
 * topic without holding its partition, and a store that goes down loses nothing.
 */
@SpringBootTest(classes = KafkaSampleService.class, webEnvironment = SpringBootTest.WebEnvironment.NONE)
class KafkaListenerServiceIT {
    private static final String RUN = Names.tag(12);
    private static final String SCHEMA = "idemkit_kafka_listener_" + RUN;
    /** The service's own database role: the store-down test takes its logins away, never the machine's own. */
    private static final String ROLE = "idemkit_it_" + RUN;
    private static final String ROLE_PASSWORD = UUID.randomUUID().toString();
    private static final String TOPIC = KafkaBroker.uniqueTopic("spring-credits");
    private static final String GROUP = "idemkit-it-" + RUN;
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @BeforeAll
    static void roleAndSchema() throws Exception {
        try (Connection c = TestPostgres.connect(); Statement s = c.createStatement()) {
            s.execute("CREATE ROLE " + ROLE + " LOGIN PASSWORD '" + ROLE_PASSWORD + "'");
            s.execute("CREATE SCHEMA " + SCHEMA + " AUTHORIZATION " + ROLE);
        }
    }

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        PostgresSettings pg = PostgresSettings.fromEnvironment();
        String url = pg.url() + (pg.url().contains("?") ? "&" : "?") + "currentSchema=" + SCHEMA;
        registry.add("spring.datasource.url", () -> url);
        registry.add("spring.datasource.username", () -> ROLE);
        registry.add("spring.datasource.password", () -> ROLE_PASSWORD);
        // a store that is down fails an attempt within a second, not Hikari's 30 s (the listener's thread waits it out,
        // and that counts against the consumer's max.poll.interval.ms)
        registry.add("spring.datasource.hikari.connection-timeout", () -> "1000");
        registry.add("spring.datasource.hikari.maximum-pool-size", () -> "6");
        registry.add("idemkit.postgres.schema", () -> SCHEMA);
        registry.add("spring.kafka.bootstrap-servers", () -> KafkaBroker.shared().settings().bootstrapServers());
        registry.add("spring.kafka.consumer.auto-offset-reset", () -> "earliest");
        registry.add("spring.kafka.listener.concurrency", () -> "2");
        registry.add("sample.topic", () -> TOPIC);
        registry.add("sample.group", () -> GROUP);
        registry.add("idemkit.kafka.idempotent-listeners", () -> "true");
        registry.add("idemkit.kafka.retry-buckets", () -> "1s,5s");
        SampleServiceProperties.fastRetriesWithoutJpa(registry);
    }

    @Autowired
    JdbcTemplate jdbc;
    /** The producers' side, and where the test reads the dead-letter topic: the adapter, not the service's beans. */
    private static final KafkaMessageTransport transport = new KafkaMessageTransport(KafkaBroker.shared().settings());

    @AfterAll
    static void dropEverything() throws Exception {
        try (KafkaMessageTransport t = transport) {
            t.deleteTopics(TOPIC);
        } finally {
            TestPostgres.dropSchema(SCHEMA);
            try (Connection c = TestPostgres.connect(); Statement s = c.createStatement()) {
                s.execute("DROP ROLE IF EXISTS " + ROLE);
            }
        }
    }

    private void publish(String id, String value, String key) {
        OutgoingMessage m = OutgoingMessage.of(id, value.getBytes(StandardCharsets.UTF_8));
        transport.publish(TOPIC, key == null ? m : m.withGroup(key));
    }

    /** Read on the test's own connection: the service's role may be locked out (the store-down test). */
    private static Long balance(String account) throws Exception {
        try (Connection c = TestPostgres.connect(); java.sql.PreparedStatement ps = c.prepareStatement(
                "SELECT balance FROM " + SCHEMA + ".accounts WHERE id = ?")) {
            ps.setString(1, account);
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : null;
            }
        }
    }

    private static boolean allCredited(List<String> accounts) throws Exception {
        for (String a : accounts) {
            if (balance(a) == null) {
                return false;
            }
        }
        return true;
    }

    private List<DeadLetterEntry> deadLettersOf(String text) {
        return transport.deadLetters().peek(TOPIC, 1000).stream()
                .filter(e -> new String(e.deadLetter().original().body(), StandardCharsets.UTF_8).contains(text))
                .toList();
    }

    private long keys() {
        return jdbc.queryForObject("SELECT count(*) FROM processed_messages WHERE consumer = ?", Long.class,
                IdempotentKafkaListenerAdvice.consumerOf(GROUP, TOPIC));
    }

    @Test
    void aStreamWithThirtyPercentDuplicateIdsCreditsEveryAccountExactlyOnce() throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        long before = keys();
        Random random = new Random(7);
        List<String[]> sent = new ArrayList<>();
        List<String> accounts = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            if (!sent.isEmpty() && random.nextInt(10) < 3) {
                String[] again = sent.get(random.nextInt(sent.size())); // the same id and value, sent again
                publish(again[0], again[1], null);
                continue;
            }
            String account = "dup-" + run + "-" + i;
            accounts.add(account);
            String[] m = {"m-" + UUID.randomUUID(), account + ":5"};
            sent.add(m);
            publish(m[0], m[1], null);
        }
        await().atMost(PATIENCE).until(() -> allCredited(accounts));
        // every record consumed and its offset committed: a duplicate applied late would show now
        await().atMost(PATIENCE).until(() -> lag() == 0);
        for (String a : accounts) {
            assertThat(balance(a)).as(a).isEqualTo(5L);
        }
        assertThat(jdbc.queryForObject("SELECT count(*) FROM credit_log WHERE account LIKE ?", Long.class,
                "dup-" + run + "-%")).as("effects run").isEqualTo(accounts.size());
        assertThat(keys() - before).as("inbox keys").isGreaterThanOrEqualTo(accounts.size());
    }

    @Test
    void aPoisonRecordAndARecordWithoutAnIdLandInTheDeadLetterTopicWithTheirReasonsAndThePartitionGoesOn()
            throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        String key = "one-partition-" + run; // every record of this test in one partition, in order
        publish("p-" + run, "poison:closed-" + run, key);
        try (KafkaProducer<byte[], byte[]> raw = new KafkaProducer<>(KafkaMessageTransport.producerProperties(
                KafkaBroker.shared().settings()), new ByteArraySerializer(), new ByteArraySerializer())) {
            raw.send(new ProducerRecord<>(TOPIC, key.getBytes(StandardCharsets.UTF_8),
                    ("noid-" + run + ":1").getBytes(StandardCharsets.UTF_8))).get();
        }
        publish("after-" + run, "after-" + run + ":3", key);
        await().atMost(PATIENCE).until(() -> balance("after-" + run) != null);
        assertThat(balance("after-" + run)).isEqualTo(3L);
        await().atMost(PATIENCE).until(() -> deadLettersOf("closed-" + run).size() == 1
                && deadLettersOf("noid-" + run).size() == 1);
        DeadLetterEntry poison = deadLettersOf("closed-" + run).get(0);
        assertThat(poison.deadLetter().reason()).contains("account closed-" + run + " is closed");
        assertThat(poison.deadLetter().attempts()).as("refused for good: one attempt").hasSize(1);
        assertThat(poison.deadLetter().original().rawId()).isEqualTo("p-" + run);
        assertThat(deadLettersOf("noid-" + run).get(0).deadLetter().reason()).containsIgnoringCase("id");
        assertThat(balance("noid-" + run)).as("a record without an id never reaches the method").isNull();
        assertThat(balance("closed-" + run)).isNull();
    }

    /**
     * Its retry does not hold its partition: the record fails its first attempt and its second is held until the test
     * releases it; the record behind it in the same partition is credited meanwhile. A retry in the listener's own
     * thread (Spring's blocking retry) would hold that record back until the release, which never comes.
     */
    @Test
    void aFailingAttemptIsRetriedThroughTheRetryTopicWhileItsPartitionGoesOn() throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        String key = "one-partition-" + run;
        publish("hold-" + run, "hold:retried-" + run + ":7", key);
        publish("next-" + run, "next-" + run + ":1", key);
        await().atMost(PATIENCE).until(() -> balance("next-" + run) != null);
        assertThat(balance("retried-" + run)).as("still held in its retry").isNull();
        jdbc.update("INSERT INTO released (id) VALUES (?)", "hold-" + run);
        await().atMost(PATIENCE).until(() -> balance("retried-" + run) != null);
        assertThat(balance("retried-" + run)).isEqualTo(7L);
        assertThat(balance("next-" + run)).isEqualTo(1L);
        List<Map<String, Object>> log = jdbc.queryForList("SELECT account, message_id, topic, kafka_partition,"
                + " kafka_offset FROM credit_log WHERE account IN (?, ?) ORDER BY seq", "retried-" + run, "next-" + run);
        assertThat(log).extracting(r -> r.get("account")).containsExactly("next-" + run, "retried-" + run);
        Map<String, Object> retried = log.get(1);
        assertThat(retried.get("topic")).as("the listener sees the record as it was on its topic").isEqualTo(TOPIC);
        assertThat(retried.get("message_id")).isEqualTo("hold-" + run);
        assertThat(retried.get("kafka_partition")).isEqualTo(log.get(0).get("kafka_partition"));
        assertThat((Long) retried.get("kafka_offset")).isLessThan((Long) log.get(0).get("kafka_offset"));
        assertThat(deadLettersOf("retried-" + run)).isEmpty();
    }

    @Test
    void whileTheStoreIsDownNothingIsLostAndAfterItsReturnAndARedriveEachCreditRunsOnce() throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        List<String> accounts = new ArrayList<>();
        setLogin(false);
        try {
            for (int i = 0; i < 6; i++) {
                accounts.add("down-" + run + "-" + i);
                publish("down-" + run + "-" + i, "down-" + run + "-" + i + ":2", null);
            }
            // three attempts each, none can reach the store: each ends in the dead-letter topic with the reason
            await().atMost(PATIENCE).until(() -> deadLettersOf("down-" + run).size() == accounts.size());
        } finally {
            setLogin(true);
        }
        // the store is back once the service's own pool hands out a connection again
        await().atMost(PATIENCE).ignoreExceptions().until(() -> jdbc.queryForObject("SELECT 1", Integer.class) == 1);
        List<DeadLetterEntry> dead = deadLettersOf("down-" + run);
        assertThat(dead).allSatisfy(e -> assertThat(e.deadLetter().attempts()).hasSize(3));
        for (DeadLetterEntry e : dead) {
            assertThat(transport.deadLetters().redrive(TOPIC, e.id(), new Approval("ops", "database back",
                    Instant.now()))).isTrue();
        }
        await().atMost(PATIENCE).until(() -> allCredited(accounts));
        for (String a : accounts) {
            assertThat(balance(a)).as(a).isEqualTo(2L);
        }
    }

    /** Records of the topic whose offsets the service's group has not committed yet (all of them if none). */
    private static long lag() throws Exception {
        java.util.Properties p = new java.util.Properties();
        p.put("bootstrap.servers", KafkaBroker.shared().settings().bootstrapServers());
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(p)) {
            return KafkaCrashChild.lag(admin, GROUP, TOPIC);
        }
    }

    /** Gives the service's role its logins back, or takes them away and ends its sessions (the store goes down). */
    private static void setLogin(boolean login) throws Exception {
        try (Connection c = TestPostgres.connect(); Statement s = c.createStatement()) {
            s.execute("ALTER ROLE " + ROLE + (login ? " LOGIN" : " NOLOGIN"));
            if (!login) {
                s.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '" + ROLE + "'");
            }
        }
    }
}
