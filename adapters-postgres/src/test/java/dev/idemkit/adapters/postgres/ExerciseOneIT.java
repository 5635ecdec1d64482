package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxKey;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The seed's exercise 1: the same "credit 100" message delivered 3 times. Without idempotency the
 * balance is 3x; with the inbox store exactly 1x; and the fix rests on the database's unique
 * constraint, not on a check in memory: with the primary key dropped the same deliveries credit 3x.
 */
class ExerciseOneIT {
    private static final long AMOUNT = 100;
    private static TestDatabase pg;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start();
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    @Test
    void aNonIdempotentConsumerCreditsThreeTimesForThreeDeliveries() {
        String account = "acc-" + UUID.randomUUID();
        for (int delivery = 0; delivery < 3; delivery++) {
            pg.db().inTransaction(work -> {
                Accounts.credit(work, account, AMOUNT);
                return null;
            });
        }
        assertThat(new Accounts(pg).balance(account)).isEqualTo(3 * AMOUNT);
    }

    @Test
    void withTheInboxStoreThreeDeliveriesCreditExactlyOnce() {
        String account = "acc-" + UUID.randomUUID();
        List<Outcome> outcomes = deliverThreeTimes(new PostgresInboxStore(pg.db()), account);

        assertThat(outcomes).containsExactly(Outcome.PROCESSED, Outcome.DUPLICATE, Outcome.DUPLICATE);
        assertThat(new Accounts(pg).balance(account)).isEqualTo(AMOUNT);
    }

    @Test
    void withoutTheUniqueConstraintTheSameDeliveriesCreditThreeTimes() {
        try (TestDatabase scratch = TestDatabase.start(2)) {
            scratch.execute("ALTER TABLE processed_messages DROP CONSTRAINT processed_messages_pkey");
            String account = "acc-" + UUID.randomUUID();

            List<Outcome> outcomes = deliverThreeTimes(new PostgresInboxStore(scratch.db()), account);

            assertThat(outcomes).containsOnly(Outcome.PROCESSED);
            assertThat(new Accounts(scratch).balance(account))
                    .as("the inbox relies on the primary key; without it nothing stops the second credit")
                    .isEqualTo(3 * AMOUNT);
        }
    }

    private static List<Outcome> deliverThreeTimes(PostgresInboxStore inbox, String account) {
        InboxKey key = InboxKey.of("credit-consumer", "msg-" + UUID.randomUUID());
        Fingerprint body = Fingerprint.of(("{\"account\":\"" + account + "\",\"amount\":100}").getBytes(StandardCharsets.UTF_8));
        List<Outcome> outcomes = new ArrayList<>();
        for (int delivery = 0; delivery < 3; delivery++) {
            outcomes.add(inbox.runOnce(key, body, work -> {
                Accounts.credit(work, account, AMOUNT);
                return null;
            }).outcome());
        }
        return outcomes;
    }
}
