package dev.idemkit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.deadletter.AttemptHistory;
import dev.idemkit.domain.deadletter.DeadLetterHeaders;
import dev.idemkit.spring.sample.Credits;
import dev.idemkit.spring.sample.SampleService;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import dev.idemkit.testsupport.Names;
import dev.idemkit.testsupport.TestRabbit;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The sample Spring Boot service against the local PostgreSQL and RabbitMQ, in a schema and a queue of its own:
 * the inbox joins {@code @Transactional}, a {@code @RabbitListener} becomes idempotent by configuration, with the
 * core's retry and dead-letter semantics.
 */
@SpringBootTest(classes = SampleService.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SampleServiceIT {
    private static final String RUN = Names.tag(12);
    private static final java.net.URI RABBIT = java.net.URI.create(TestRabbit.URI);
    private static final String SCHEMA = "idemkit_spring_" + RUN;
    private static final String QUEUE = "idemkit.spring.credits." + RUN;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        SampleServiceProperties.register(registry, SCHEMA, QUEUE, RABBIT);
        registry.add("spring.rabbitmq.listener.simple.concurrency", () -> "4");
        registry.add("idemkit.http.paths", () -> "/payments/**");
        registry.add("idemkit.http.client-header", () -> "X-Client-Id");
        registry.add("idemkit.http.max-body-size", () -> "64KB");
        registry.add("spring.datasource.hikari.maximum-pool-size", () -> "20");
        registry.add("management.endpoint.health.show-details", () -> "always");
    }

    @Autowired
    Credits credits;
    @Autowired
    IdempotentInbox inbox;
    @Autowired
    JdbcTemplate jdbc;
    @Autowired
    RabbitTemplate rabbit;
    @Autowired
    RabbitAdmin admin;
    @Autowired
    MeterRegistry meters;
    @Autowired
    org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry listeners;
    @LocalServerPort
    int port;
    @Autowired
    IdemkitHealthIndicator health;
    @Autowired
    dev.idemkit.adapters.rabbit.RabbitAdoptedDeliveries deliveries;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private HttpResponse<byte[]> post(String client, String key, String json) throws Exception {
        return post("/payments", "application/json", null, client, key, json);
    }

    private HttpResponse<byte[]> post(String path, String contentType, String user, String client, String key,
            String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30)).header("Content-Type", contentType)
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (user != null) {
            b.header("X-Test-User", user);
        }
        if (client != null) {
            b.header("X-Client-Id", client);
        }
        if (key != null) {
            b.header("Idempotency-Key", key);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private long charges(String account) {
        return jdbc.queryForObject("SELECT count(*) FROM charges WHERE account = ?", Long.class, account);
    }

    @Test
    void aHundredParallelSameKeyPostsChargeOnceAndGetAHundredIdenticalResponses() throws Exception {
        String account = "acc-" + UUID.randomUUID();
        String key = UUID.randomUUID().toString();
        String json = "{\"amount\": 150, \"account_id\": \"" + account + "\"}";
        ExecutorService pool = Executors.newFixedThreadPool(100);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<HttpResponse<byte[]>>> futures = new ArrayList<>();
        try {
            for (int i = 0; i < 100; i++) {
                futures.add(pool.submit(() -> {
                    start.await();
                    return post("client-a", key, json);
                }));
            }
            start.countDown();
            List<HttpResponse<byte[]>> responses = new ArrayList<>();
            for (Future<HttpResponse<byte[]>> f : futures) {
                responses.add(f.get(60, TimeUnit.SECONDS));
            }
            assertThat(charges(account)).as("charges").isEqualTo(1);
            assertThat(responses).extracting(HttpResponse::statusCode).containsOnly(201);
            byte[] first = responses.get(0).body();
            assertThat(new String(first, StandardCharsets.UTF_8)).contains("\"status\":\"created\"");
            for (HttpResponse<byte[]> r : responses) {
                assertThat(r.body()).as("byte-identical").isEqualTo(first);
                assertThat(r.headers().firstValue("Location")).isEqualTo(responses.get(0).headers().firstValue("Location"));
            }
            assertThat(responses.stream().filter(r -> r.headers().firstValue("Idempotent-Replayed").isPresent()))
                    .hasSize(99);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void anotherBodyUnderTheKeyIs422AndAnotherClientWithTheSameKeyIsIndependent() throws Exception {
        String account = "acc-" + UUID.randomUUID();
        String key = UUID.randomUUID().toString();
        String json = "{\"amount\": 10, \"account_id\": \"" + account + "\"}";
        HttpResponse<byte[]> first = post("client-a", key, json);
        assertThat(first.statusCode()).isEqualTo(201);
        HttpResponse<byte[]> mismatch = post("client-a", key, json.replace("10", "11"));
        assertThat(mismatch.statusCode()).isEqualTo(422);
        assertThat(mismatch.headers().firstValue("Content-Type")).hasValueSatisfying(
                v -> assertThat(v).startsWith("application/problem+json"));
        HttpResponse<byte[]> other = post("client-b", key, json);
        assertThat(other.statusCode()).isEqualTo(201);
        assertThat(other.body()).isNotEqualTo(first.body());
        assertThat(charges(account)).isEqualTo(2);
    }

    private long idempotencyRecords(String key) {
        return jdbc.queryForObject("SELECT count(*) FROM idempotency_records WHERE idem_key = ?", Long.class, key);
    }

    @Test
    void noKeyNoClientAndAFailingHandlerAreClearAndKeepNothing() throws Exception {
        String account = "explode-" + UUID.randomUUID();
        String json = "{\"amount\": 10, \"account_id\": \"" + account + "\"}";
        assertThat(post("client-a", null, json).statusCode()).as("no key").isEqualTo(400);
        HttpResponse<byte[]> noClient = post(null, UUID.randomUUID().toString(), json);
        assertThat(noClient.statusCode()).as("no client").isEqualTo(401);
        assertThat(new String(noClient.body(), StandardCharsets.UTF_8)).as("a problem type of idemkit's own, not"
                + " about:blank glued to its base").startsWith("{\"type\":\"https://idemkit.dev/problems/unknown-client\"");
        assertThat(post("client-a", "x".repeat(300), json).statusCode()).as("over-long key").isEqualTo(400);
        String key = UUID.randomUUID().toString();
        assertThat(post("client-a", key, json).statusCode()).as("the handler charged, then threw").isEqualTo(500);
        assertThat(post("client-a", key, json).statusCode())
                .as("the key was freed: the retry runs (and fails) again, not 409").isEqualTo(500);
        assertThat(charges(account)).as("the charges of the failed handler").isZero();
        assertThat(idempotencyRecords(key)).isZero();
    }

    @Test
    void aHandlersOwnErrorAnswerAfterAFailedStatementReachesTheClientUnstoredAndItsChargeIsGone() throws Exception {
        String account = "doomed-" + UUID.randomUUID();
        String key = UUID.randomUUID().toString();
        String json = "{\"amount\": 10, \"account_id\": \"" + account + "\"}";
        for (int i = 0; i < 2; i++) {
            HttpResponse<byte[]> r = post("client-a", key, json);
            assertThat(r.statusCode()).as("the handler's own answer, not a 500").isEqualTo(422);
            assertThat(new String(r.body(), StandardCharsets.UTF_8)).contains("declined");
            assertThat(r.headers().firstValue("Idempotent-Replayed")).as("run again, never replayed").isEmpty();
        }
        assertThat(charges(account)).isZero();
        assertThat(idempotencyRecords(key)).isZero();
    }

    @Test
    void anErrorSentWithSendErrorIsRenderedAndNotStored() throws Exception {
        String key = UUID.randomUUID().toString();
        for (int i = 0; i < 2; i++) {
            HttpResponse<byte[]> r = post("client-a", key, "{not json");
            assertThat(r.statusCode()).as("Spring's 400 for an unreadable body").isEqualTo(400);
            assertThat(r.headers().firstValue("Idempotent-Replayed")).isEmpty();
        }
        assertThat(idempotencyRecords(key)).isZero();
    }

    @Test
    void twoIdempotencyKeyLinesAreA400InEitherOrderAndChargeNothing() throws Exception {
        String account = "acc-" + UUID.randomUUID();
        String json = "{\"amount\": 7, \"account_id\": \"" + account + "\"}";
        String k1 = UUID.randomUUID().toString();
        String k2 = UUID.randomUUID().toString();
        for (List<String> keys : List.of(List.of(k1, k2), List.of(k2, k1), List.of(k1, k1))) {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/payments"))
                    .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                    .header("X-Client-Id", "client-a").POST(HttpRequest.BodyPublishers.ofString(json));
            keys.forEach(k -> b.header("Idempotency-Key", k)); // one field line each
            HttpResponse<byte[]> r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
            assertThat(r.statusCode()).as("keys %s", keys).isEqualTo(400);
            assertThat(new String(r.body(), StandardCharsets.UTF_8)).contains("is a list");
        }
        assertThat(charges(account)).isZero();
        assertThat(post("client-a", k1, json).statusCode()).as("one line of the same key").isEqualTo(201);
        assertThat(charges(account)).isEqualTo(1);
    }

    @Test
    void aBodyOverIdemkitHttpMaxBodySizeIs413BeforeTheHandlerWithOrWithoutItsLength() throws Exception {
        String account = "acc-" + UUID.randomUUID();
        String big = "{\"amount\": 9, \"account_id\": \"" + account + "\", \"pad\": \"" + "x".repeat(70_000) + "\"}";
        HttpResponse<byte[]> declared = post("client-a", UUID.randomUUID().toString(), big);
        HttpResponse<byte[]> chunked = http.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + "/payments")).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json").header("X-Client-Id", "client-a")
                .header("Idempotency-Key", UUID.randomUUID().toString())
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(
                        big.getBytes(StandardCharsets.UTF_8)))).build(), HttpResponse.BodyHandlers.ofByteArray());
        for (HttpResponse<byte[]> r : List.of(declared, chunked)) {
            assertThat(r.statusCode()).isEqualTo(413);
            assertThat(new String(r.body(), StandardCharsets.UTF_8)).contains("body-too-large")
                    .contains("idemkit.http.max-body-size");
        }
        assertThat(charges(account)).isZero();
        String small = "{\"amount\": 9, \"account_id\": \"" + account + "\", \"pad\": \"" + "x".repeat(60_000) + "\"}";
        assertThat(post("client-a", UUID.randomUUID().toString(), small).statusCode()).as("under the cap")
                .isEqualTo(201);
        assertThat(charges(account)).isEqualTo(1);
    }

    @Test
    void formsAndAsynchronousHandlersAreRefusedAndChargeNothing() throws Exception {
        String account = "acc-" + UUID.randomUUID();
        assertThat(post("/payments", "application/x-www-form-urlencoded", null, "client-a",
                UUID.randomUUID().toString(), "amount=1&account_id=" + account).statusCode()).isEqualTo(415);
        assertThat(post("/payments/async", "application/json", null, "client-a", UUID.randomUUID().toString(),
                "{\"amount\": 1, \"account_id\": \"" + account + "\"}").statusCode()).isEqualTo(500);
        Thread.sleep(500); // an async charge would have landed by now
        assertThat(charges(account)).isZero();
    }

    @Test
    void keysAreKeptPerAuthenticatedPrincipalAndAHeaderNeverImpersonatesOne() throws Exception {
        String account = "acc-" + UUID.randomUUID();
        String key = UUID.randomUUID().toString();
        String json = "{\"amount\": 3, \"account_id\": \"" + account + "\"}";
        HttpResponse<byte[]> alice = post("/payments", "application/json", "alice", null, key, json);
        HttpResponse<byte[]> aliceAgain = post("/payments", "application/json", "alice", "bob", key, json);
        HttpResponse<byte[]> bob = post("/payments", "application/json", "bob", null, key, json);
        HttpResponse<byte[]> headerAlice = post("/payments", "application/json", null, "alice", key, json);
        assertThat(alice.statusCode()).isEqualTo(201);
        assertThat(aliceAgain.body()).as("the principal wins over the header").isEqualTo(alice.body());
        assertThat(aliceAgain.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(bob.statusCode()).isEqualTo(201);
        assertThat(bob.body()).isNotEqualTo(alice.body());
        assertThat(headerAlice.statusCode()).isEqualTo(201);
        assertThat(headerAlice.body()).as("a header naming alice is not alice").isNotEqualTo(alice.body());
        assertThat(charges(account)).isEqualTo(3);
    }

    @BeforeEach
    void tables() {
        jdbc.execute("CREATE TABLE IF NOT EXISTS accounts (id text PRIMARY KEY, balance bigint NOT NULL)");
        jdbc.execute("CREATE TABLE IF NOT EXISTS notes (text text NOT NULL)");
        jdbc.execute("CREATE TABLE IF NOT EXISTS charges (id text PRIMARY KEY, account text NOT NULL, amount bigint NOT NULL)");
    }

    @AfterAll
    static void dropSchemaAndQueues() {
        SampleServiceProperties.dropSchemaAndQueue(SCHEMA, QUEUE, RABBIT);
    }

    private String account() {
        String id = "acc-" + UUID.randomUUID();
        jdbc.update("INSERT INTO accounts (id, balance) VALUES (?, 0)", id);
        return id;
    }

    private long keys(String consumer, String messageId) {
        Long n = jdbc.queryForObject("SELECT count(*) FROM processed_messages WHERE consumer = ? AND message_id = ?",
                Long.class, consumer, messageId);
        return n == null ? 0 : n;
    }

    private long balance(String account) {
        Long b = jdbc.queryForObject("SELECT balance FROM accounts WHERE id = ?", Long.class, account);
        return b == null ? 0 : b;
    }

    private double duplicatesCounted() {
        var counter = meters.find("idemkit.inbox.deliveries").tag("consumer", "credits").tag("outcome", "duplicate")
                .counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void itRunsUnderADataSourceTransactionManager(@Autowired org.springframework.transaction.PlatformTransactionManager tm) {
        assertThat(tm).isInstanceOf(org.springframework.jdbc.datasource.DataSourceTransactionManager.class);
    }

    @Test
    void theSameMessageThreeTimesIsCreditedOnce() {
        double duplicatesBefore = duplicatesCounted();
        String account = account();
        String id = UUID.randomUUID().toString();
        List<Outcome> outcomes = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            outcomes.add(credits.credit(id, "{\"amount\":150}", account, 150));
        }
        assertThat(outcomes).containsExactly(Outcome.PROCESSED, Outcome.DUPLICATE, Outcome.DUPLICATE);
        assertThat(balance(account)).isEqualTo(150);
        assertThat(duplicatesCounted() - duplicatesBefore).isEqualTo(2);
    }

    @Test
    void aMethodThatThrowsAfterTheCreditKeepsNeitherKeyNorCreditAndTheRedeliveryCreditsOnce() {
        String account = account();
        String id = UUID.randomUUID().toString();
        assertThatThrownBy(() -> credits.creditThenFail(id, "b", account, 70))
                .isInstanceOf(IllegalStateException.class).hasMessage("failed after the credit");
        assertThat(keys("credits", id)).isZero();
        assertThat(balance(account)).isZero();
        assertThat(credits.credit(id, "b", account, 70)).isEqualTo(Outcome.PROCESSED);
        assertThat(credits.credit(id, "b", account, 70)).isEqualTo(Outcome.DUPLICATE);
        assertThat(balance(account)).isEqualTo(70);
    }

    @Test
    void anEffectThatThrowsInsideACatchingMethodLeavesNoKeyNoCreditAndTheMethodsOwnWorkCommits() {
        String account = account();
        String id = UUID.randomUUID().toString();
        String note = "note-" + UUID.randomUUID();
        credits.creditCatchingTheEffectsFailure(id, "b", account, note);
        assertThat(keys("credits", id)).isZero();
        assertThat(balance(account)).isZero();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM notes WHERE text = ?", Long.class, note)).isEqualTo(1);
    }

    @Test
    void aDuplicateNeverMarksTheCallersTransactionRollbackOnly() {
        String account = account();
        String id = UUID.randomUUID().toString();
        credits.credit(id, "b", account, 5);
        String note = "note-" + UUID.randomUUID();
        assertThat(credits.duplicateThenOwnWork(id, "b", account, note)).as("rollback-only").isFalse();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM notes WHERE text = ?", Long.class, note)).isEqualTo(1);
        assertThat(balance(account)).isEqualTo(5);
    }

    @Test
    void badInputIsAClearErrorAndWritesNothing() {
        String account = account();
        assertThatThrownBy(() -> credits.creditWithoutTransaction(UUID.randomUUID().toString(), "b", account, 1))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("@Transactional");
        assertThatThrownBy(() -> credits.credit(null, "b", account, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("message id");
        assertThatThrownBy(() -> credits.credit("x".repeat(256), "b", account, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("255");
        assertThat(balance(account)).isZero();
    }

    private void send(String messageId, String body) {
        MessageProperties p = new MessageProperties();
        if (messageId != null) {
            p.setMessageId(messageId);
        }
        p.setContentType(MessageProperties.CONTENT_TYPE_TEXT_PLAIN);
        rabbit.send("", QUEUE, new Message(body.getBytes(StandardCharsets.UTF_8), p));
    }

    @Test
    void anIdempotentRabbitListenerCreditsAThousandMessagesWithThirtyPercentDuplicatesExactly() {
        String account = account();
        Random random = new Random(42);
        List<String[]> sends = new ArrayList<>();
        long expected = 0;
        for (int i = 0; i < 700; i++) {
            long amount = 1 + random.nextInt(100);
            expected += amount;
            sends.add(new String[] {"m-" + RUN + "-" + i, account + ":" + amount});
        }
        for (int i = 0; i < 300; i++) {
            sends.add(sends.get(random.nextInt(700))); // the same id with the same body: a redelivery
        }
        Collections.shuffle(sends, random);
        for (String[] s : sends) {
            send(s[0], s[1]);
        }
        long total = expected;
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            assertThat(balance(account)).isEqualTo(total);
            assertThat(admin.getQueueInfo(QUEUE).getMessageCount()).isZero();
        });
        assertThat(jdbc.queryForObject("SELECT count(*) FROM processed_messages WHERE consumer = ? AND message_id"
                + " LIKE ?", Long.class, IdempotentListenerAdvice.consumerOf(QUEUE), "m-" + RUN + "-%")).isEqualTo(700);
        // every one acknowledged, not only delivered: stopped, the listener gives back what it held unacked
        var container = listeners.getListenerContainer("credits");
        container.stop();
        try {
            assertThat(admin.getQueueInfo(QUEUE).getMessageCount()).as("messages left after the listener stopped")
                    .isZero();
        } finally {
            container.start();
        }
    }

    /** Drains the dead-letter queue until it held a message for every one of {@code ids} (keyed by message id). */
    private java.util.Map<String, Message> deadLetters(java.util.Set<String> ids) {
        java.util.Map<String, Message> dead = new java.util.HashMap<>();
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            Message m = rabbit.receive(QUEUE + ".dlq", 200);
            if (m != null) {
                String id = m.getMessageProperties().getMessageId();
                dead.put(id == null ? "no-id:" + new String(m.getBody(), StandardCharsets.UTF_8) : id, m);
            }
            return dead.keySet().containsAll(ids);
        });
        return dead;
    }

    @Test
    void aPoisonMessageReachesTheDeadLetterQueueWithItsReasonAfterTheConfiguredAttempts() {
        double before = meters.find("idemkit.dead.letters").tag("queue", QUEUE).counter() == null ? 0
                : meters.get("idemkit.dead.letters").tag("queue", QUEUE).counter().count();
        String id = "poison-" + UUID.randomUUID();
        String body = "acc-" + UUID.randomUUID() + ":1";
        send(id, "poison");
        send(null, body); // no message id: malformed, at once
        java.util.Map<String, Message> dead = deadLetters(java.util.Set.of(id, "no-id:" + body));
        Message poison = dead.get(id);
        MessageProperties p = poison.getMessageProperties();
        assertThat(new String(poison.getBody(), StandardCharsets.UTF_8)).isEqualTo("poison");
        assertThat((String) p.getHeader(DeadLetterHeaders.REASON))
                .isEqualTo("gave up after 3 attempts: IllegalStateException: cannot process this credit");
        assertThat((String) p.getHeader(DeadLetterHeaders.ORIGIN_QUEUE)).isEqualTo(QUEUE);
        assertThat(AttemptHistory.decode(p.getHeader(DeadLetterHeaders.ATTEMPTS).toString())).hasSize(3);
        assertThat(dead.get("no-id:" + body).getMessageProperties().getHeader(DeadLetterHeaders.REASON).toString())
                .isEqualTo("non-retryable: message has no message id; it cannot be de-duplicated");
        assertThat(keys(IdempotentListenerAdvice.consumerOf(QUEUE), id)).isZero();
        assertThat(meters.get("idemkit.dead.letters").tag("queue", QUEUE).counter().count() - before).isEqualTo(2);
        assertThat(admin.getQueueInfo(QUEUE).getMessageCount()).isZero();
    }

    @Test
    void aListenerThatSwallowsAFailedStatementOrADoomedTransactionIsDeadLetteredNotLoopedNorCredited() {
        String account = account();
        String swallow = "swallow-" + UUID.randomUUID();
        String doomed = "doomed-" + UUID.randomUUID();
        send(swallow, "swallow:" + account + ":7");
        send(doomed, "doomed:" + account + ":9");
        java.util.Map<String, Message> dead = deadLetters(java.util.Set.of(swallow, doomed));
        assertThat(dead.get(swallow).getMessageProperties().getHeader(DeadLetterHeaders.REASON).toString())
                .startsWith("gave up after 3 attempts: IllegalStateException: the effect left the transaction aborted");
        assertThat(dead.get(doomed).getMessageProperties().getHeader(DeadLetterHeaders.REASON).toString())
                .startsWith("gave up after 3 attempts: IllegalStateException: the effect left the caller's transaction"
                        + " rollback-only");
        assertThat(balance(account)).isZero();
    }

    @Test
    void whileTheStoreFailsTheMessageWaitsInItsRetryQueueAndIsAppliedOnceWhenTheStoreIsBack() {
        String account = account();
        String id = "flaky-" + UUID.randomUUID();
        send(id, "flaky:" + account + ":6");
        await().atMost(Duration.ofSeconds(20)).until(() -> balance(account) == 6);
        assertThat(dev.idemkit.spring.sample.CreditListener.FLAKY_CALLS.get(id)).as("two failed attempts, then one")
                .isEqualTo(3);
        assertThat(dev.idemkit.spring.sample.CreditListener.FLAKY_REDELIVERED.get(id))
                .as("the last attempt is the retry copy from its bucket, not a broker redelivery").isFalse();
        assertThat(keys(IdempotentListenerAdvice.consumerOf(QUEUE), id)).isEqualTo(1);
    }

    /**
     * The listener's copies go through the adapter's one allow-list (issue: a CC naming the listener's own queue
     * multiplied one poison into hundreds of calls), and the listener reads its headers on a retry where it read them
     * first (they travel nested on idemkit's copies and are put back before it is called).
     */
    @Test
    void aPoisonWithCcNamingItsOwnQueueIsTriedThreeTimesAndTheListenerSeesItsHeadersOnEveryAttempt() {
        String id = "cc-poison-" + UUID.randomUUID();
        MessageProperties p = new MessageProperties();
        p.setMessageId(id);
        p.setContentType(MessageProperties.CONTENT_TYPE_TEXT_PLAIN);
        p.setHeader("CC", List.of(QUEUE));
        p.setHeader("tenant", "acme");
        rabbit.send("", QUEUE, new Message("poison".getBytes(StandardCharsets.UTF_8), p));
        await().atMost(Duration.ofSeconds(30)).until(() -> dead(id));
        assertThat(deliveries.deadLetterQueue().peek(QUEUE, 100).stream()
                .filter(e -> id.equals(e.deadLetter().original().rawId()))).as("dead letters").hasSize(1);
        assertThat(dev.idemkit.spring.sample.CreditListener.CALLS.stream().filter(id::equals)).as("calls").hasSize(3);
        assertThat(dev.idemkit.spring.sample.CreditListener.TENANTS.get(id)).containsExactly("acme", "acme", "acme");
    }

    @Test
    void aPoisonMessageDoesNotHoldItsListenerThreadWhileItWaitsForItsRetries() {
        // one listener thread, and the poison at the head of the queue with twenty credits behind it: a retry waited
        // out on that thread would run the poison's three attempts back to back; a retry waiting in its bucket comes
        // back at the tail of the queue, after the twenty
        var container = (org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer)
                listeners.getListenerContainer("credits");
        container.stop();
        container.setConcurrentConsumers(1);
        container.setMaxConcurrentConsumers(1);
        String account = account();
        String poison = "poison-" + UUID.randomUUID();
        List<String> behind = new ArrayList<>();
        try {
            send(poison, "poison");
            for (int i = 0; i < 20; i++) {
                behind.add("behind-" + UUID.randomUUID());
                send(behind.get(i), account + ":1");
            }
            container.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> balance(account) == 20 && dead(poison));
        } finally {
            container.stop();
            container.setMaxConcurrentConsumers(4);
            container.setConcurrentConsumers(4);
            container.start();
        }
        List<String> calls = dev.idemkit.spring.sample.CreditListener.CALLS.stream()
                .filter(id -> id.equals(poison) || behind.contains(id)).toList();
        assertThat(calls.stream().filter(poison::equals).count()).as("the poison's attempts").isEqualTo(3);
        int secondAttempt = calls.subList(1, calls.size()).indexOf(poison) + 1;
        assertThat(calls.subList(0, secondAttempt)).as("what the thread did before the poison's second attempt")
                .containsAll(behind);
    }

    private boolean dead(String messageId) {
        return deliveries.deadLetterQueue().peek(QUEUE, 100).stream()
                .anyMatch(e -> messageId.equals(e.deadLetter().original().rawId()));
    }

    @Test
    void theListenersDeadLettersAreListedShownAndRedrivenByTheRabbitAdaptersDeadLetterQueue() {
        String account = account();
        String id = "until-fixed-" + UUID.randomUUID();
        send(id, "until-fixed:" + account + ":8");
        var dlq = deliveries.deadLetterQueue();
        await().atMost(Duration.ofSeconds(30)).until(() -> dead(id));
        var entry = dlq.peek(QUEUE, 100).stream().filter(e -> id.equals(e.deadLetter().original().rawId()))
                .findFirst().orElseThrow();
        assertThat(entry.deadLetter().reason()).isEqualTo("gave up after 3 attempts: IllegalStateException: the"
                + " downstream service refuses it until it is fixed");
        assertThat(entry.deadLetter().originQueue()).isEqualTo(QUEUE);
        assertThat(entry.deadLetter().attempts()).extracting(a -> a.number()).containsExactly(1, 2, 3);
        assertThat(dlq.findDetailed(QUEUE, entry.id())).get().satisfies(detailed -> assertThat(detailed.brokerDeaths())
                .as("the broker's x-death: it went through the hold queue").isNotEmpty());
        assertThat(balance(account)).isZero();

        dev.idemkit.spring.sample.CreditListener.FIXED.add(id);
        assertThat(dlq.redrive(QUEUE, entry.id(), new dev.idemkit.domain.deadletter.Approval("ana", "downstream fixed",
                java.time.Instant.now()))).isTrue();
        await().atMost(Duration.ofSeconds(20)).until(() -> balance(account) == 8);
        assertThat(dead(id)).isFalse();
        assertThat(keys(IdempotentListenerAdvice.consumerOf(QUEUE), id)).isEqualTo(1);
    }

    @Test
    void aListenerUsingTheInboxItselfWithTheQueuesNameIsCreditedNotMistakenForADuplicate() {
        String account = account();
        send("inner-" + UUID.randomUUID(), "inner:" + account + ":5");
        await().atMost(Duration.ofSeconds(20)).until(() -> balance(account) == 5);
    }

    @Test
    void healthSaysTheStoreIsReachableAndAlertsWhenADeadLetterQueueIsAboveTheThreshold() throws Exception {
        String account = account();
        send("health-" + UUID.randomUUID(), account + ":1"); // the listener serves the queue
        await().atMost(Duration.ofSeconds(20)).until(() -> balance(account) == 1);
        String dlq = QUEUE + ".dlq"; // declared by idemkit at start-up, with the listener's other settle paths
        admin.purgeQueue(dlq, false);
        try {
            for (int i = 0; i < 11; i++) {
                rabbit.send("", dlq, new Message(("dead-" + i).getBytes(StandardCharsets.UTF_8), new MessageProperties()));
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> admin.getQueueInfo(dlq).getMessageCount() == 11);
            org.springframework.boot.health.contributor.Health alerting = health.health();
            assertThat(alerting.getStatus().getCode()).isEqualTo("UP");
            assertThat(alerting.getDetails()).containsEntry("store", "reachable").containsEntry("alert", true)
                    .containsEntry("alertThreshold", 10);
            assertThat(alerting.getDetails().get("deadLetters")).isEqualTo(java.util.Map.of(dlq, 11L));
        } finally {
            admin.purgeQueue(dlq, false);
        }
        assertThat(health.health().getDetails()).containsEntry("alert", false);
        HttpResponse<String> actuator = http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/actuator/health")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(actuator.body()).as("Boot's health endpoint").contains("\"idemkit\"").contains("\"reachable\"");
    }
}
