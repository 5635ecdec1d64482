package dev.idemkit.app.http;

import static dev.idemkit.app.TestEnvironment.CLIENT_A_KEY;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.idemkit.app.TestEnvironment;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.config.Sources;
import dev.idemkit.app.json.CanonicalJson;
import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.app.wiring.ConsumerKind;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The dead-letter console's JSON API against the real RabbitMQ and PostgreSQL: the app's credit consumer on a queue of
 * its own, 12 dead letters written as the transport writes them, one of whose message ids the consumer then processes
 * through the queue (so the inbox holds its key), and 3 more that failed another way (another failure group).
 */
class OperatorConsoleIT {
    static final String OPERATOR_KEY = "operator-key-" + UUID.randomUUID();
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private static String schema;
    private static String queue;
    private static String prefix;
    private static String accounts;
    private static Assembly assembly;
    private static Subscription consumer;
    private static OperatorConsole console;
    private static ApiServer api;
    private static URI base;

    @BeforeAll
    static void start() throws Exception {
        schema = TestEnvironment.unique("app_it_console");
        queue = TestEnvironment.unique("app-it-console");
        prefix = UUID.randomUUID().toString().substring(0, 8);
        accounts = "acc-console-" + prefix;
        assembly = Assembly.start(AppSettings.resolve(Sources.of(Map.of(), TestEnvironment.settings(schema))));
        String consumerName = "console-it-" + prefix;
        consumer = assembly.transport().subscribe(queue, assembly.consumer(consumerName, ConsumerKind.CREDIT_ACCOUNT));
        Map<String, dev.idemkit.ports.in.DeadLetters> queues = Map.of(queue, assembly.deadLetters(consumerName,
                alert -> { }));
        console = new OperatorConsole(queues, assembly.redrives(queues, 200),
                ApiKeys.of(Map.of("ana", OPERATOR_KEY)), 10, assembly.clock());
        api = ApiServer.start(new InetSocketAddress("127.0.0.1", 0), OperatorConsole.routes(console,
                ex -> ex.sendResponseHeaders(404, -1)));
        base = URI.create("http://127.0.0.1:" + api.port());

        DeadLetterInjector.inject(TestEnvironment.RABBIT_URI, queue, prefix, accounts, 12,
                "gave up: payment provider timed out");
        DeadLetterInjector.inject(TestEnvironment.RABBIT_URI, queue, prefix, accounts, 12, 15, i ->
                "gave up after 3 attempts: IllegalStateException: provider refused account " + i + " (limit 100)");
        Awaitility.await("15 dead letters").atMost(Duration.ofSeconds(20))
                .until(() -> assembly.deadLetterQueue().depth(queue) == 15);
        // the message of dl-<prefix>-0 arrives again through the queue and is processed: its key is in the inbox
        assembly.transport().publish(queue, OutgoingMessage.of(DeadLetterInjector.messageId(prefix, 0),
                DeadLetterInjector.credit(accounts + "-0")));
        Awaitility.await("the copy of m-0 processed").atMost(Duration.ofSeconds(20))
                .until(() -> balance(0).compareTo(BigDecimal.ONE) == 0);
    }

    @AfterAll
    static void stop() throws Exception {
        if (api != null) {
            api.close();
        }
        if (console != null) {
            console.close();
        }
        if (consumer != null) {
            consumer.close();
        }
        if (assembly != null) {
            ((dev.idemkit.adapters.rabbit.RabbitMessageTransport) assembly.transport()).deleteTopology(queue);
            assembly.close();
        }
        TestEnvironment.dropSchema(schema);
    }

    @Test
    void withoutAnOperatorKeyEveryOperationIs401AndAClientsApiKeyIsNotOne() throws Exception {
        for (String auth : new String[] {null, "Bearer " + CLIENT_A_KEY, "Bearer wrong-operator-key"}) {
            HttpRequest.Builder r = HttpRequest.newBuilder(base.resolve("/ops/dead-letters?queue=" + queue)).GET();
            if (auth != null) {
                r.header("Authorization", auth);
            }
            HttpResponse<byte[]> response = HTTP.send(r.build(), HttpResponse.BodyHandlers.ofByteArray());
            assertThat(response.statusCode()).as("with %s", auth).isEqualTo(401);
            assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
            assertThat(response.headers().firstValue("WWW-Authenticate")).get().asString().startsWith("Bearer");
        }
        assertThat(post("/ops/redrive", null, Map.of("queue", queue, "ids", List.of("dl-" + prefix + "-1"),
                "approver", "ana", "reason", "x")).statusCode()).isEqualTo(401);
    }

    @Test
    void theListShowsOriginReasonAttemptsAndAgeFiltersAndRaisesTheAlert() throws Exception {
        JsonNode all = json(get("/ops/dead-letters?queue=" + queue));
        assertThat(all.get("depth").asLong()).isGreaterThanOrEqualTo(7);
        assertThat(all.get("alert").asBoolean()).isEqualTo(all.get("depth").asLong() > 10);
        JsonNode first = all.get("dead_letters").get(0);
        assertThat(first.get("origin_queue").asText()).isEqualTo(queue);
        assertThat(first.get("reason").asText()).isEqualTo("gave up: payment provider timed out");
        assertThat(first.get("attempts").asInt()).isEqualTo(1);
        long sinceFirstAttempt = Duration.between(DeadLetterInjector.FIRST_ATTEMPT,
                java.time.Instant.now()).toSeconds(); // the age counts from the first failed attempt
        assertThat(first.get("age_seconds").asLong()).isBetween(sinceFirstAttempt - 600, sinceFirstAttempt + 600);

        assertThat(json(get("/ops/dead-letters?queue=" + queue + "&reason=PROVIDER")).get("dead_letters"))
                .hasSize(all.get("dead_letters").size());
        assertThat(json(get("/ops/dead-letters?queue=" + queue + "&reason=disk")).get("dead_letters")).isEmpty();
        assertThat(json(get("/ops/dead-letters?queue=" + queue + "&min_age_seconds=" + (sinceFirstAttempt + 3600)))
                .get("dead_letters")).isEmpty();
        assertThat(json(get("/ops/dead-letters?queue=" + queue + "&min_age_seconds=" + (sinceFirstAttempt - 3600)))
                .get("dead_letters")).hasSize(all.get("dead_letters").size());
        assertThat(get("/ops/dead-letters?queue=no-such-queue").statusCode()).isEqualTo(404);
        assertThat(get("/ops/dead-letters?queue=" + queue + "&limit=0").statusCode()).isEqualTo(400);
    }

    @Test
    void oneDeadLetterShowsHeadersAndHistoryAndItsBodyOnlyWhenRevealed() throws Exception {
        String id = "dl-" + prefix + "-11";
        JsonNode hidden = json(get("/ops/dead-letters/" + id + "?queue=" + queue));
        assertThat(hidden.has("body")).isFalse();
        assertThat(hidden.get("body_bytes").asInt()).isPositive();
        assertThat(hidden.get("attempt_history").get(0).get("error").asText()).contains("provider timed out");
        assertThat(hidden.get("headers").get("tenant").asText()).isEqualTo("t-1");
        assertThat(hidden.get("headers").get("note").asText()).as("control characters escaped")
                .isEqualTo("\\u001b[31mred");

        JsonNode shown = json(get("/ops/dead-letters/" + id + "?queue=" + queue + "&reveal=true"));
        assertThat(shown.get("body").asText()).isEqualTo(new String(DeadLetterInjector.credit(accounts + "-11"),
                StandardCharsets.UTF_8));
        assertThat(get("/ops/dead-letters/no-such-id?queue=" + queue).statusCode()).isEqualTo(404);
    }

    @Test
    void aRedriveNeedsAnApproverAndAReasonAndAnUnknownIdIs404() throws Exception {
        HttpResponse<byte[]> noApprover = post("/ops/redrive", OPERATOR_KEY, Map.of("queue", queue,
                "ids", List.of("dl-" + prefix + "-1"), "reason", "provider back"));
        HttpResponse<byte[]> blankReason = post("/ops/redrive", OPERATOR_KEY, Map.of("queue", queue,
                "ids", List.of("dl-" + prefix + "-1"), "approver", "ana", "reason", " "));
        HttpResponse<byte[]> unknown = post("/ops/redrive", OPERATOR_KEY, Map.of("queue", queue,
                "ids", List.of("dl-does-not-exist"), "approver", "ana", "reason", "provider back"));

        // a "dry_run" that is not a JSON boolean is refused, never read as false (which would redrive for real)
        HttpResponse<byte[]> stringly = post("/ops/redrive", OPERATOR_KEY, Map.of("queue", queue,
                "ids", List.of("dl-" + prefix + "-1"), "approver", "ana", "reason", "check", "dry_run", "True"));
        HttpResponse<byte[]> objectApprover = post("/ops/redrive", OPERATOR_KEY, Map.of("queue", queue,
                "ids", List.of("dl-" + prefix + "-1"), "approver", Map.of(), "reason", "check"));
        assertThat(stringly.statusCode()).isEqualTo(400);
        assertThat(objectApprover.statusCode()).isEqualTo(400);
        assertThat(noApprover.statusCode()).isEqualTo(400);
        assertThat(CanonicalJson.MAPPER.readTree(noApprover.body()).get("type").asText()).endsWith("approval-required");
        assertThat(blankReason.statusCode()).isEqualTo(400);
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(balance(1)).isEqualByComparingTo(BigDecimal.ZERO);
    }

    /** A control character (a NUL: PostgreSQL text cannot hold one) is refused before anything is recorded. */
    @Test
    void aNulInTheApproverTheReasonOrAnIdIsA400AndRecordsNoAudit() throws Exception {
        int before = json(get("/ops/audit")).get("entries").size();
        for (Map<String, Object> body : List.<Map<String, Object>>of(
                Map.of("queue", queue, "ids", List.of("dl-" + prefix + "-1"), "approver", "ana", "reason", "fix\u0000ed"),
                Map.of("queue", queue, "ids", List.of("dl-" + prefix + "-1"), "approver", "a\u0000na", "reason", "fixed"),
                Map.of("queue", queue, "ids", List.of("dl-" + prefix + "\u0000-1"), "approver", "ana", "reason", "fixed"))) {
            HttpResponse<byte[]> r = post("/ops/redrive", OPERATOR_KEY, body);
            assertThat(r.statusCode()).as(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo(400);
            assertThat(new String(r.body(), StandardCharsets.UTF_8)).contains("control character");
        }
        JsonNode entries = json(get("/ops/audit")).get("entries");
        assertThat(entries.size()).as("audit entries").isEqualTo(before);
        entries.forEach(e -> assertThat(e.get("state").asText()).isNotEqualTo("running"));
        assertThat(balance(1)).isEqualByComparingTo(BigDecimal.ZERO);
    }

    /**
     * Dry run first (one skipped: the inbox holds its key, answered at once), then the redrive of five as a job
     * ({@code 202}, polled until done), processed once each.
     */
    @Test
    void aDryRunSkipsTheProcessedOneAndMovesNothingThenFiveAreRedrivenAndProcessedAndAudited() throws Exception {
        List<String> five = new ArrayList<>();
        for (int i = 0; i <= 5; i++) {
            five.add("dl-" + prefix + "-" + (i == 0 ? 0 : i + 5)); // 0 (processed already), 6..10
        }
        long depth = assembly.deadLetterQueue().depth(queue);
        JsonNode plan = json(post("/ops/redrive", OPERATOR_KEY, Map.of("queue", queue, "ids", five,
                "dry_run", true))); // a dry run needs no approval
        assertThat(plan.get("dry_run").asBoolean()).isTrue();
        assertThat(plan.get("results").get(0).get("action").asText()).isEqualTo("SKIP_ALREADY_PROCESSED");
        for (int i = 1; i <= 5; i++) {
            assertThat(plan.get("results").get(i).get("action").asText()).isEqualTo("REPUBLISH");
        }
        assertThat(assembly.deadLetterQueue().depth(queue)).as("a dry run moves nothing").isEqualTo(depth);

        HttpResponse<byte[]> accepted = post("/ops/redrive", OPERATOR_KEY, Map.of("queue", queue, "ids",
                five.subList(1, 6), "approver", "ana", "reason", "provider back"));
        assertThat(accepted.statusCode()).as(new String(accepted.body(), StandardCharsets.UTF_8)).isEqualTo(202);
        String job = json(accepted).get("job").asText();
        assertThat(accepted.headers().firstValue("Location")).hasValue("/ops/redrive/jobs/" + job);
        Awaitility.await("the redrive job ended").atMost(Duration.ofSeconds(30))
                .until(() -> !json(get("/ops/redrive/jobs/" + job)).get("state").asText().equals("running"));
        JsonNode done = json(get("/ops/redrive/jobs/" + job));
        assertThat(done.get("state").asText()).as(done.toString()).isEqualTo("done");
        assertThat(done.get("done").asInt()).isEqualTo(5);
        assertThat(done.get("total").asInt()).isEqualTo(5);
        assertThat(done.get("results")).allSatisfy(r -> assertThat(r.get("action").asText()).isEqualTo("REPUBLISH"));
        Awaitility.await("the five processed").atMost(Duration.ofSeconds(30)).until(() -> {
            for (int i = 6; i <= 10; i++) {
                if (balance(i).compareTo(BigDecimal.ONE) != 0) {
                    return false;
                }
            }
            return true;
        });
        assertThat(assembly.deadLetterQueue().depth(queue)).isEqualTo(depth - 5);
        assertThat(balance(0)).as("the processed one was not redriven").isEqualByComparingTo(BigDecimal.ONE);

        JsonNode audit = json(get("/ops/audit"));
        assertThat(audit.get("entries").get(0).get("id").asLong()).as("the job names its audit entry")
                .isEqualTo(done.get("audit_id").asLong());
        assertThat(audit.get("entries").get(0).get("approver").asText()).isEqualTo("ana");
        assertThat(audit.get("entries").get(0).get("operator").asText()).isEqualTo("ana");
        assertThat(audit.get("entries").get(0).get("dry_run").asBoolean()).isFalse();
        assertThat(audit.get("entries").get(0).get("reason").asText()).isEqualTo("provider back");
        assertThat(audit.get("entries").get(0).get("state").asText()).isEqualTo("done");
        assertThat(audit.get("entries").get(0).get("results")).hasSize(5);
        assertThat(audit.get("entries").get(1).get("dry_run").asBoolean()).isTrue();
        assertThat(audit.get("entries").get(1).get("approver").asText()).isEqualTo("(dry run)");
    }

    /** The overview: depth, alert, and the age of the head of the queue, counted from its first failed attempt. */
    @Test
    void theQueueOverviewGivesDepthAlertAndTheAgeOfTheOldestDeadLetter() throws Exception {
        long before = Duration.between(DeadLetterInjector.FIRST_ATTEMPT, java.time.Instant.now()).toSeconds();
        JsonNode q = json(get("/ops/queues")).get("queues").get(0);
        long after = Duration.between(DeadLetterInjector.FIRST_ATTEMPT, java.time.Instant.now()).toSeconds();
        assertThat(q.get("queue").asText()).isEqualTo(queue);
        assertThat(q.get("depth").asLong()).isEqualTo(assembly.deadLetterQueue().depth(queue));
        assertThat(q.get("alert").asBoolean()).isEqualTo(q.get("depth").asLong() > 10);
        assertThat(q.get("oldest_age_seconds").asLong()).isBetween(before - 1, after + 1);
    }

    /**
     * Failure groups: the two reasons make two groups, counted right (the 3 refusals exactly, the timeouts as the list
     * has them), first seen at the first failed attempt; a dry run of the refusals' group names exactly its three and
     * moves nothing; its redrive names the ids the dry run showed (without them: 400), is a job like any other on one
     * approval and moves exactly those of them the group holds, processed once, the other group untouched (an id of it
     * named too is not moved); sent again, nothing of the group is left: 404.
     */
    @Test
    void deadLettersAreGroupedByFailureAndAGroupIsDryRunThenRedrivenOnOneApproval() throws Exception {
        String refused = "gave up after <n> attempts: IllegalStateException: provider refused account <n> (limit <n>)";
        String timedOut = "gave up: payment provider timed out";
        List<String> refusedIds = List.of("dl-" + prefix + "-12", "dl-" + prefix + "-13", "dl-" + prefix + "-14");
        long depth = assembly.deadLetterQueue().depth(queue);
        List<String> timedOutIds = new ArrayList<>();
        json(get("/ops/dead-letters?queue=" + queue + "&limit=500")).get("dead_letters").forEach(d -> {
            if (d.get("reason").asText().equals(timedOut)) {
                timedOutIds.add(d.get("id").asText());
            }
        });

        JsonNode read = json(get("/ops/failure-groups?queue=" + queue));
        assertThat(read.get("scanned").asLong()).isEqualTo(depth);
        assertThat(read.get("complete").asBoolean()).isTrue();
        JsonNode groups = read.get("groups");
        assertThat(groups).extracting(g -> g.get("group").asText()).as("largest first").containsExactly(timedOut,
                refused);
        JsonNode timeouts = groups.get(0);
        assertThat(timeouts.get("count").asInt()).isEqualTo(timedOutIds.size()).isEqualTo((int) depth - 3);
        assertThat(timeouts.get("ids")).extracting(JsonNode::asText).containsExactlyInAnyOrderElementsOf(timedOutIds);
        assertThat(timeouts.get("exception_type").isNull()).isTrue();
        JsonNode refusals = groups.get(1);
        assertThat(refusals.get("count").asInt()).isEqualTo(3);
        assertThat(refusals.get("ids")).extracting(JsonNode::asText).containsExactlyInAnyOrderElementsOf(refusedIds);
        assertThat(refusals.get("exception_type").asText()).isEqualTo("IllegalStateException");
        assertThat(refusals.get("example_reason").asText()).matches("gave up after 3 attempts:"
                + " IllegalStateException: provider refused account 1[234] \\(limit 100\\)");
        assertThat(refusals.get("first_seen").asText()).isEqualTo(DeadLetterInjector.FIRST_ATTEMPT.toString());
        assertThat(java.time.Instant.parse(refusals.get("last_seen").asText()))
                .isAfterOrEqualTo(DeadLetterInjector.FIRST_ATTEMPT);

        JsonNode plan = json(post("/ops/redrive", OPERATOR_KEY, Map.of("queue", queue, "group", refused,
                "dry_run", true)));
        assertThat(plan.get("results")).extracting(r -> r.get("id").asText()).containsExactlyInAnyOrderElementsOf(refusedIds);
        assertThat(plan.get("results")).allSatisfy(r -> assertThat(r.get("action").asText()).isEqualTo("REPUBLISH"));
        assertThat(assembly.deadLetterQueue().depth(queue)).as("a dry run moves nothing").isEqualTo(depth);

        HttpResponse<byte[]> unnamed = post("/ops/redrive", OPERATOR_KEY, Map.of("queue", queue, "group", refused,
                "approver", "ana", "reason", "provider raised the limit"));
        assertThat(unnamed.statusCode()).as("a group's redrive names the ids its dry run showed").isEqualTo(400);
        assertThat(new String(unnamed.body(), StandardCharsets.UTF_8)).contains("never what joined the group since");
        // the dry run's ids, and one of another group: only the group's own are moved
        List<String> approved = new ArrayList<>(refusedIds);
        approved.add(timedOutIds.get(0));
        HttpResponse<byte[]> accepted = post("/ops/redrive", OPERATOR_KEY, Map.of("queue", queue, "group", refused,
                "ids", approved, "approver", "ana", "reason", "provider raised the limit"));
        assertThat(accepted.statusCode()).as(new String(accepted.body(), StandardCharsets.UTF_8)).isEqualTo(202);
        String job = json(accepted).get("job").asText();
        Awaitility.await("the group's redrive job ended").atMost(Duration.ofSeconds(30))
                .until(() -> !json(get("/ops/redrive/jobs/" + job)).get("state").asText().equals("running"));
        JsonNode done = json(get("/ops/redrive/jobs/" + job));
        assertThat(done.get("state").asText()).as(done.toString()).isEqualTo("done");
        assertThat(done.get("results")).extracting(r -> r.get("id").asText()).containsExactlyInAnyOrderElementsOf(refusedIds);
        Awaitility.await("the three processed").atMost(Duration.ofSeconds(30)).until(() -> balance(12)
                .compareTo(BigDecimal.ONE) == 0 && balance(13).compareTo(BigDecimal.ONE) == 0
                && balance(14).compareTo(BigDecimal.ONE) == 0);
        assertThat(assembly.deadLetterQueue().depth(queue)).isEqualTo(depth - 3);
        JsonNode after = json(get("/ops/failure-groups?queue=" + queue)).get("groups");
        assertThat(after).extracting(g -> g.get("group").asText()).containsExactly(timedOut);
        assertThat(after.get(0).get("ids")).extracting(JsonNode::asText).as("the other group untouched")
                .containsExactlyInAnyOrderElementsOf(timedOutIds);
        JsonNode audit = json(get("/ops/audit")).get("entries").get(0);
        assertThat(audit.get("approver").asText()).isEqualTo("ana");
        assertThat(audit.get("reason").asText()).isEqualTo("provider raised the limit");
        assertThat(audit.get("ids").asInt()).isEqualTo(3);

        HttpResponse<byte[]> again = post("/ops/redrive", OPERATOR_KEY, Map.of("queue", queue, "group", refused,
                "ids", refusedIds, "approver", "ana", "reason", "provider raised the limit"));
        assertThat(again.statusCode()).as("nothing of the group left").isEqualTo(404);
        assertThat(CanonicalJson.MAPPER.readTree(again.body()).get("type").asText()).endsWith("unknown-failure-group");
        Thread.sleep(300); // a second copy would be processed by now
        for (int i = 12; i <= 14; i++) {
            assertThat(balance(i)).as("account %d exactly once", i).isEqualByComparingTo(BigDecimal.ONE);
        }
    }

    /** A redrive names ids, a group or both; a group must be a string; an unknown queue or group is 404. */
    @Test
    void aRedriveNamesIdsAGroupOrBothAndAnUnknownGroupIs404() throws Exception {
        int before = json(get("/ops/audit")).get("entries").size();
        HttpResponse<byte[]> notInIt = post("/ops/redrive", OPERATOR_KEY, Map.of("queue", queue, "ids",
                List.of("dl-" + prefix + "-1"), "group", "no such failure <n>", "dry_run", true));
        HttpResponse<byte[]> neither = post("/ops/redrive", OPERATOR_KEY, Map.of("queue", queue, "dry_run", true));
        assertThat(notInIt.statusCode()).as("ids none of which the group holds: " + new String(notInIt.body(),
                StandardCharsets.UTF_8)).isEqualTo(404);
        assertThat(neither.statusCode()).isEqualTo(400);
        assertThat(new String(neither.body(), StandardCharsets.UTF_8)).contains("got neither");
        assertThat(post("/ops/redrive", OPERATOR_KEY, Map.of("queue", queue, "group", 42, "dry_run", true))
                .statusCode()).isEqualTo(400);
        assertThat(post("/ops/redrive", OPERATOR_KEY, Map.of("queue", queue, "group", " ", "dry_run", true))
                .statusCode()).isEqualTo(400);
        HttpResponse<byte[]> withoutIds = post("/ops/redrive", OPERATOR_KEY, Map.of("queue", queue, "group",
                "no such failure <n>", "approver", "ana", "reason", "x"));
        assertThat(withoutIds.statusCode()).as("a group's redrive without the ids of its dry run").isEqualTo(400);
        HttpResponse<byte[]> unknown = post("/ops/redrive", OPERATOR_KEY, Map.of("queue", queue, "group",
                "no such failure <n>", "ids", List.of("dl-" + prefix + "-1"), "approver", "ana", "reason", "x"));
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(new String(unknown.body(), StandardCharsets.UTF_8)).contains("No failure group");
        assertThat(get("/ops/failure-groups?queue=no-such-queue").statusCode()).isEqualTo(404);
        assertThat(json(get("/ops/audit")).get("entries").size()).as("nothing recorded").isEqualTo(before);
    }

    @Test
    void anUnknownJobIs404() throws Exception {
        assertThat(get("/ops/redrive/jobs/" + UUID.randomUUID()).statusCode()).isEqualTo(404);
        assertThat(get("/ops/redrive/jobs/").statusCode()).isEqualTo(404);
    }

    @Test
    void theConsolePageIsServedWithAContentSecurityPolicy() throws Exception {
        HttpResponse<String> page = HTTP.send(HttpRequest.newBuilder(base.resolve("/console")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("Content-Security-Policy")).get().asString().contains("connect-src 'self'")
                .contains("script-src 'sha256-").doesNotContain("unsafe-inline';  script").contains("base-uri 'none'");
        assertThat(page.body()).contains("idemkit dead-letter console").doesNotContain("innerHTML");
    }

    private static BigDecimal balance(int i) {
        BigDecimal b = assembly.store().effects().balance(accounts + "-" + i);
        return b == null ? BigDecimal.ZERO : b;
    }

    private static HttpResponse<byte[]> get(String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(base.resolve(path)).header("Authorization", "Bearer " + OPERATOR_KEY)
                .GET().build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static HttpResponse<byte[]> post(String path, String key, Map<String, Object> body) throws Exception {
        HttpRequest.Builder r = HttpRequest.newBuilder(base.resolve(path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(CanonicalJson.MAPPER.writeValueAsBytes(body)));
        if (key != null) {
            r.header("Authorization", "Bearer " + key);
        }
        return HTTP.send(r.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static JsonNode json(HttpResponse<byte[]> r) throws Exception {
        assertThat(r.statusCode()).as("status of %s", new String(r.body(), StandardCharsets.UTF_8)).isLessThan(300);
        return CanonicalJson.MAPPER.readTree(r.body());
    }
}
