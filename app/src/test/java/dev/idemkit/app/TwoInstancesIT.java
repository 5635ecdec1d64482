package dev.idemkit.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.config.Sources;
import dev.idemkit.app.consumers.AccountCredit;
import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.app.wiring.ConsumerKind;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Two {@code serve}-like instances (separate store pools and broker connections, one PostgreSQL schema), one
 * consuming a delivery per transaction and one in batches, consume ONE RabbitMQ queue while 10,000 {@code accounts.credit} messages, 30 % of them duplicates
 * (same id, same body), are published: every account ends with exactly the sum over distinct ids.
 */
@Tag("slow") // full tier: RabbitClusterIT runs two instances on one queue too (2,000 credits, 30 % duplicates)
class TwoInstancesIT {
    private static final int MESSAGES = 10_000;
    private static final double DUPLICATES = 0.30;
    private static final int ACCOUNTS = 5;
    private static final int PUBLISHERS = 4;

    private String schema;
    private String queue;
    private String run;
    private Assembly first;
    private Assembly second;

    @BeforeEach
    void start() {
        schema = TestEnvironment.unique("app_it_two");
        run = UUID.randomUUID().toString().substring(0, 8);
        queue = AccountCredit.QUEUE + ".two-" + run;
        Map<String, String> env = TestEnvironment.settings(schema, "IDEMKIT_CONCURRENCY", "8");
        AppSettings settings = AppSettings.resolve(Sources.of(Map.of(), env));
        first = Assembly.start(settings);
        second = Assembly.start(settings);
    }

    @AfterEach
    void stop() throws Exception {
        try {
            if (first != null) {
                first.transportBinding().deleteQueue(queue);
                first.close();
            }
            if (second != null) {
                second.close();
            }
        } finally {
            TestEnvironment.dropSchema(schema);
        }
    }

    @Test
    void twoInstancesOnOneQueueCreditExactlyTheSumOverDistinctMessageIds() throws Exception {
        CreditPlan credits = CreditPlan.of(new SplittableRandom(run.hashCode()), MESSAGES, DUPLICATES, ACCOUNTS, "two-" + run);
        List<OutgoingMessage> plan = credits.messages();
        Map<String, BigDecimal> expected = credits.expectedBalances();
        long distinct = credits.distinct();
        assertThat(plan.size() - distinct).as("duplicates in the plan").isBetween(2_700L, 3_300L);

        AtomicLong settledFirst = new AtomicLong();
        AtomicLong settledSecond = new AtomicLong();
        Subscription a = first.transport().subscribe(queue, counted(first.consumer(ConsumerKind.CREDIT_ACCOUNT),
                settledFirst));
        // the second instance consumes as serve does by default: batched (keys and credits of a batch in one
        // transaction, its credits in one statement), acked after the commit
        dev.idemkit.ports.service.BatchingConsumer<?> batched = second.batchedConsumer(ConsumerKind.CREDIT_ACCOUNT,
                dev.idemkit.ports.service.BatchingConsumer.BatchSettings.defaults().withMaxBatch(50));
        Subscription b = second.transport().subscribe(queue, counted(batched, settledSecond));
        try {
            publishFromSeveralThreads(plan);

            // every message settled once (a retried delivery comes back and settles again), none left waiting
            await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200)).until(() ->
                    settledFirst.get() + settledSecond.get() - decisions("retried") >= MESSAGES
                            && readyCount() == 0 && processed() >= distinct);
        } finally {
            a.close();
            batched.close();
            b.close();
        }
        assertThat(batched.batches()).as("batches the second instance committed").isPositive();

        assertThat(credits.balances(schema)).isEqualTo(expected);
        assertThat(processed()).as("effects run, over both instances").isEqualTo(distinct);
        assertThat(decisions("duplicate")).as("duplicates recognised, over both instances")
                .isGreaterThanOrEqualTo(plan.size() - distinct);
        assertThat(first.metrics().count("idemkit_messages", "decision", "processed"))
                .as("the first instance did part of the work").isPositive();
        assertThat(second.metrics().count("idemkit_messages", "decision", "processed"))
                .as("the second instance did part of the work").isPositive();
    }


    /** Interleaved slices, half through each instance's publishing connection. */
    private void publishFromSeveralThreads(List<OutgoingMessage> plan) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(PUBLISHERS);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < PUBLISHERS; t++) {
                int slice = t;
                Assembly via = t % 2 == 0 ? first : second;
                done.add(pool.submit(() -> {
                    for (int i = slice; i < plan.size(); i += PUBLISHERS) {
                        via.transport().publish(queue, plan.get(i));
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static DeliveryHandler counted(DeliveryHandler delegate, AtomicLong settled) {
        return d -> {
            delegate.onDelivery(d);
            settled.incrementAndGet();
        };
    }

    private long processed() {
        return decisions("processed");
    }

    private long decisions(String decision) {
        return (long) (first.metrics().count("idemkit_messages", "decision", decision)
                + second.metrics().count("idemkit_messages", "decision", decision));
    }

    private long readyCount() throws Exception {
        return TestEnvironment.rabbitReady(queue);
    }

}
