package dev.idemkit.app.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.adapters.postgres.PostgresDatabase;
import dev.idemkit.adapters.postgres.PostgresOutbox;
import dev.idemkit.adapters.postgres.PostgresOutboxStore;
import dev.idemkit.adapters.postgres.PostgresSettings;
import dev.idemkit.app.TestEnvironment;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.out.OutboxEntry;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.out.RelayOutcome;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code idemkit outbox list | show | redrive | discard} on the real PostgreSQL outbox: a parked message is listed with
 * its reason, shown with its failures, redriven or discarded only with an approval, which is recorded; an unknown id
 * exits 1; on Redis (no outbox) the command exits 2 naming the store.
 */
class OutboxCommandIT {
    private static String schema;
    private static PostgresDatabase db;
    private static PostgresOutboxStore store;
    private static Map<String, String> env;

    @BeforeAll
    static void start() {
        schema = TestEnvironment.unique("app_it_outbox_cli");
        env = TestEnvironment.settings(schema);
        db = PostgresDatabase.builder(PostgresSettings.fromEnvironment().withSchema(schema).withPoolSize(2))
                .schemaCheck(PostgresDatabase.SchemaCheck.NONE).start();
        store = new PostgresOutboxStore(db);
    }

    @AfterAll
    static void stop() throws Exception {
        store.close();
        db.close();
        TestEnvironment.dropSchema(schema);
    }

    private static String parked(String key, String why) {
        String id = db.inTransaction(w -> new PostgresOutbox(db).append(w, OutboxMessage.of("it.cli", key,
                "{\"secret\":\"s3cr3t\"}".getBytes(StandardCharsets.UTF_8))));
        Instant now = Instant.now();
        store.relay(100, now, runs -> Map.of(id, new RelayOutcome.Parked(new AttemptRecord(1, now, "refused"), why)));
        return id;
    }

    @Test
    void aParkedMessageIsListedShownAndRedrivenOrDiscardedWithAnApproval() {
        String redriven = parked("k1", "broker refused it");
        String discarded = parked("k2", "no broker will take it");

        TestEnvironment.Run list = TestEnvironment.run(env, "outbox", "list");
        assertThat(list.exitCode()).as(list.err()).isZero();
        assertThat(list.out()).contains(redriven).contains("broker refused it").contains(discarded).contains("2 parked");

        TestEnvironment.Run show = TestEnvironment.run(env, "outbox", "show", redriven);
        assertThat(show.out()).contains("PARKED").contains("failure 1").contains("refused").contains("19 bytes")
                .as("no body without --body").doesNotContain("s3cr3t");

        TestEnvironment.Run noApprover = TestEnvironment.run(env, "outbox", "redrive", redriven, "--reason", "why");
        assertThat(noApprover.exitCode()).isEqualTo(2);
        assertThat(store.find(redriven).orElseThrow().state()).isEqualTo(OutboxEntry.State.PARKED);

        TestEnvironment.Run redrive = TestEnvironment.run(env, "outbox", "redrive", redriven, "--approved-by", "ana",
                "--reason", "queue fixed");
        assertThat(redrive.exitCode()).as(redrive.err()).isZero();
        assertThat(store.find(redriven).orElseThrow().state()).isEqualTo(OutboxEntry.State.PENDING);

        TestEnvironment.Run discard = TestEnvironment.run(env, "outbox", "discard", discarded, "--approved-by", "bia",
                "--reason", "unsendable");
        assertThat(discard.exitCode()).as(discard.err()).isZero();
        OutboxEntry gone = store.find(discarded).orElseThrow();
        assertThat(gone.state()).isEqualTo(OutboxEntry.State.DISCARDED);
        assertThat(gone.redrive()).hasValueSatisfying(r -> assertThat(r).contains("bia").contains("unsendable"));

        TestEnvironment.Run unknown = TestEnvironment.run(env, "outbox", "discard", "00000000-0000-7000-8000-000000000000",
                "--approved-by", "bia", "--reason", "x");
        assertThat(unknown.exitCode()).isEqualTo(1);
        assertThat(unknown.out()).contains("NOT PARKED");
    }

    @Test
    void onRedisThereIsNoOutboxAndTheCommandSaysSo() {
        Map<String, String> redis = TestEnvironment.settings(schema, "IDEMKIT_STORE", "redis", "IDEMKIT_REDIS_PREFIX",
                "it-outbox-cli-" + schema);
        TestEnvironment.Run run = TestEnvironment.run(redis, "outbox", "list");
        assertThat(run.exitCode()).as(run.err()).isEqualTo(2);
        assertThat(run.err()).contains("store").contains("no outbox");
    }
}
