package dev.idemkit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idemkit.domain.deadletter.AttemptHistory;
import dev.idemkit.domain.deadletter.DeadLetterHeaders;
import dev.idemkit.spring.batchsample.BatchSampleService;
import dev.idemkit.spring.batchsample.BatchSampleService.BatchCreditListener;
import dev.idemkit.testsupport.Names;
import dev.idemkit.testsupport.TestRabbit;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A batch {@code @RabbitListener} (Spring AMQP consumer batching, 50 per batch) made idempotent by the starter: each
 * batch's keys and the listener's call for its new messages in one transaction, acknowledged after the commit; what the
 * batch cannot decide goes message by message through the single flow. Before the batch flow, the advice passed batch
 * listeners through untouched and every duplicate was credited.
 */
@SpringBootTest(classes = BatchSampleService.class, webEnvironment = SpringBootTest.WebEnvironment.NONE)
class BatchListenerIT {
    private static final String RUN = Names.tag(12);
    private static final java.net.URI RABBIT = java.net.URI.create(TestRabbit.URI);
    private static final String SCHEMA = "idemkit_spring_batch_" + RUN;
    private static final String QUEUE = "idemkit.spring.batch-credits." + RUN;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        SampleServiceProperties.register(registry, SCHEMA, QUEUE, RABBIT);
        registry.add("spring.rabbitmq.listener.simple.consumer-batch-enabled", () -> "true");
        registry.add("spring.rabbitmq.listener.simple.batch-size", () -> "50");
        registry.add("spring.rabbitmq.listener.simple.concurrency", () -> "2");
    }

    @Autowired
    JdbcTemplate jdbc;
    @Autowired
    RabbitTemplate rabbit;

    @BeforeEach
    void tables() {
        jdbc.execute("CREATE TABLE IF NOT EXISTS accounts (id text PRIMARY KEY, balance bigint NOT NULL)");
    }

    @AfterAll
    static void dropSchemaAndQueues() {
        SampleServiceProperties.dropSchemaAndQueue(SCHEMA, QUEUE, RABBIT);
    }

    private Map<String, Message> deadLetters(Set<String> ids) {
        Map<String, Message> dead = new HashMap<>();
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            Message m = rabbit.receive(QUEUE + ".dlq", 200);
            if (m != null) {
                dead.put(m.getMessageProperties().getMessageId(), m);
            }
            return dead.keySet().containsAll(ids);
        });
        return dead;
    }

    @Test
    void aBatchListenerCreditsAThousandMessagesWithThirtyPercentDuplicatesExactlyInBatches() {
        String account = SampleAccounts.account(jdbc);
        Random random = new Random(7);
        List<String[]> sent = new ArrayList<>();
        long expected = 0;
        Set<String> unique = new HashSet<>();
        for (int i = 0; i < 1_000; i++) {
            String[] m;
            if (!sent.isEmpty() && random.nextDouble() < 0.3) {
                m = sent.get(random.nextInt(sent.size()));
            } else {
                int amount = 1 + random.nextInt(9);
                m = new String[] {"batch-" + UUID.randomUUID(), account + ":" + amount};
                expected += amount;
                unique.add(m[0]);
            }
            sent.add(m);
        }
        int sizesBefore = BatchCreditListener.SIZES.size();
        for (String[] m : sent) {
            SampleAccounts.send(rabbit, QUEUE, m[0], m[1]);
        }
        long total = expected;
        await().atMost(Duration.ofSeconds(60)).until(() -> SampleAccounts.balance(jdbc, account) >= total);
        await().atMost(Duration.ofSeconds(30)).until(() -> rabbit.execute(ch -> ch.queueDeclarePassive(QUEUE))
                .getMessageCount() == 0);
        assertThat(SampleAccounts.balance(jdbc, account)).as("credited exactly once each").isEqualTo(expected);
        Long keys = jdbc.queryForObject("SELECT count(*) FROM processed_messages WHERE consumer = ?", Long.class,
                IdempotentListenerAdvice.consumerOf(QUEUE));
        assertThat(keys).as("inbox keys").isGreaterThanOrEqualTo(unique.size());
        assertThat(BatchCreditListener.SIZES.stream().skip(sizesBefore).mapToInt(Integer::intValue).max().orElse(0))
                .as("the listener was called with batches").isGreaterThan(1);
    }

    @Test
    void aPoisonInABatchIsDeadLetteredAloneAfterThreeAttemptsAndTheRestOfItsBatchCreditedOnce() {
        String account = SampleAccounts.account(jdbc);
        String poison = "batch-poison-" + UUID.randomUUID();
        for (int i = 0; i < 20; i++) {
            SampleAccounts.send(rabbit, QUEUE, "batch-ok-" + UUID.randomUUID(), account + ":" + (i + 1));
            if (i == 9) {
                SampleAccounts.send(rabbit, QUEUE, poison, "poison");
            }
        }
        Map<String, Message> dead = deadLetters(Set.of(poison));
        MessageProperties p = dead.get(poison).getMessageProperties();
        assertThat((String) p.getHeader(DeadLetterHeaders.REASON))
                .isEqualTo("gave up after 3 attempts: IllegalStateException: cannot process this credit");
        assertThat((String) p.getHeader(DeadLetterHeaders.ORIGIN_QUEUE)).isEqualTo(QUEUE);
        assertThat(AttemptHistory.decode(p.getHeader(DeadLetterHeaders.ATTEMPTS).toString())).hasSize(3);
        await().atMost(Duration.ofSeconds(30)).until(() -> SampleAccounts.balance(jdbc, account) >= 210);
        assertThat(SampleAccounts.balance(jdbc, account)).as("the twenty credits of the poison's batch, once each")
                .isEqualTo(210);
    }

    @Test
    void anIdReusedWithAnotherBodyInsideABatchIsDeadLetteredWithTheReason() {
        String account = SampleAccounts.account(jdbc);
        String id = "batch-reused-" + UUID.randomUUID();
        SampleAccounts.send(rabbit, QUEUE, id, account + ":5");
        await().atMost(Duration.ofSeconds(30)).until(() -> SampleAccounts.balance(jdbc, account) == 5);
        SampleAccounts.send(rabbit, QUEUE, id, account + ":500");
        Map<String, Message> dead = deadLetters(Set.of(id));
        assertThat(new String(dead.get(id).getBody(), StandardCharsets.UTF_8)).isEqualTo(account + ":500");
        assertThat(dead.get(id).getMessageProperties().getHeader(DeadLetterHeaders.REASON).toString())
                .contains("reused");
        assertThat(SampleAccounts.balance(jdbc, account)).isEqualTo(5);
    }
}
