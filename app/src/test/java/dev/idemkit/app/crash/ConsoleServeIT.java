package dev.idemkit.app.crash;

import dev.idemkit.testsupport.ChildJvm;
import dev.idemkit.testsupport.TestRabbit;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.idemkit.app.TestEnvironment;
import dev.idemkit.app.http.DeadLetterInjector;
import dev.idemkit.app.json.CanonicalJson;
import dev.idemkit.app.wiring.ConsumerKind;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The dead-letter console of a running {@code idemkit serve} (a JVM of its own) on the real RabbitMQ (a private
 * virtual host, so the app's fixed queue names touch nothing else) and PostgreSQL (a schema of its own):
 * <ul>
 *   <li>in headless Chromium (Debian's, driven by Playwright from {@code src/test/browser}): 12 dead letters raise the
 *       alert, the queue overview shows depth, alert and the oldest's age, two failure groups (9 timeouts, 3 lock
 *       timeouts) with their counts, filter, reveal a body, a dry run skips the one the inbox already processed, five
 *       are redriven with an approval (a job whose progress the page polls) and processed, the audit shows it; then the
 *       groups are recounted (4 and 3), the lock timeouts' group is dry-run and redriven on one approval: exactly its
 *       three processed once, the other group still dead-lettered; screenshots are written to {@code
 *       target/console.png} and {@code target/console-groups.png} (the groups and a group's dry run, the one in the
 *       README);
 *   <li>a redrive is a job: its POST answers at once, the job shows its progress, another redrive of the queue
 *       meanwhile is refused naming it;
 *   <li>a bulk redrive interrupted by SIGKILL of serve: after the restart every selected message was redriven and
 *       processed exactly once or is still in the dead-letter queue, none is lost, and the same request again
 *       finishes it;
 *   <li>a redrive job when serve stops (SIGTERM): stopped between two dead letters, recorded as such, resumed.
 * </ul>
 */
class ConsoleServeIT {
    private static final String OPERATOR_KEY = "operator-" + UUID.randomUUID();
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private static final String QUEUE = ConsumerKind.CREDIT_ACCOUNT.queue();

    private final String schema = TestEnvironment.unique("app_it_console_serve");
    private final String prefix = UUID.randomUUID().toString().substring(0, 8);
    private final String accounts = "acc-cs-" + prefix;
    private TestRabbit.Vhost vhost;
    private ChildJvm serve;
    private URI base;

    @BeforeEach
    void vhost() throws Exception {
        vhost = new TestRabbit.Vhost();
    }

    @AfterEach
    void cleanUp() throws Exception {
        if (serve != null) {
            serve.close();
        }
        vhost.close();
        TestEnvironment.dropSchema(schema);
    }

    @Test
    @org.junit.jupiter.api.Tag("slow") // the full tier: a browser beside the README tier's tests; no guarantee of its own
    void inTheBrowserDeadLettersAreFilteredShownDryRunAndFiveRedrivenWithAnApproval() throws Exception {
        Path browserDir = Path.of("src", "test", "browser").toAbsolutePath();
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/chromium")),
                "no browser: Debian's chromium is not installed (.ci/run installs it: apt-get install chromium)");
        Assumptions.assumeTrue(Files.isDirectory(browserDir.resolve("node_modules/playwright-core")),
                "playwright-core is not installed in src/test/browser (.ci/run runs npm ci there)");
        startServe("browser", 50);
        // two failure groups, both "timed out" (the filter below matches all 12): 0..8 and 9..11
        DeadLetterInjector.inject(vhost.uri(), QUEUE, prefix, accounts, 0, 12, i -> i < 9
                ? "gave up after 3 attempts: SocketTimeoutException: payment provider timed out after " + (3000 + i * 250)
                        + " ms"
                : "gave up after 3 attempts: IllegalStateException: ledger lock for account " + i + " timed out");
        awaitDepth(12);
        processAgainThroughTheQueue(0);
        List<String> five = List.of(dl(1), dl(2), dl(3), dl(4), dl(5));
        Path screenshot = Path.of("target", "console.png").toAbsolutePath();
        Path groupsScreenshot = Path.of("target", "console-groups.png").toAbsolutePath();
        Files.deleteIfExists(screenshot);
        Files.deleteIfExists(groupsScreenshot);

        ProcessBuilder node = new ProcessBuilder("node", "console-e2e.mjs").directory(browserDir.toFile())
                .redirectError(ProcessBuilder.Redirect.INHERIT);
        node.environment().putAll(Map.of("CONSOLE_URL", base.resolve("/console").toString(), "OPERATOR_KEY",
                OPERATOR_KEY, "QUEUE", QUEUE, "PROCESSED_ID", dl(0), "REDRIVE_IDS", String.join(",", five),
                "SCREENSHOT", screenshot.toString(), "GROUPS_SCREENSHOT", groupsScreenshot.toString(),
                "GROUP_TYPE", "IllegalStateException"));
        Process p = node.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("the browser run ended").isTrue();
        assertThat(p.exitValue()).as("the browser run; stdout: %s", out).isZero();
        JsonNode seen = CanonicalJson.MAPPER.readTree(out.strip().lines().reduce((a, b) -> b).orElseThrow());

        assertThat(seen.get("alert").asText()).contains("12 dead letters").contains("threshold 10");
        assertThat(seen.get("rows").asInt()).isEqualTo(12);
        JsonNode overview = row(seen.get("overview"), QUEUE);
        assertThat(overview.get(1).asText()).as("depth").isEqualTo("12");
        assertThat(overview.get(2).asText()).as("alert").isEqualTo("ALERT (above 10)");
        long sinceFirstAttempt = Duration.between(DeadLetterInjector.FIRST_ATTEMPT, java.time.Instant.now()).toSeconds();
        java.util.Set<String> ages = new java.util.HashSet<>(); // as the page wrote it, up to 3 minutes ago
        for (long s = sinceFirstAttempt - 180; s <= sinceFirstAttempt; s++) {
            ages.add(ageText(s));
        }
        assertThat(overview.get(3).asText()).as("oldest, since its first failed attempt").isIn(ages);
        String timeouts = "gave up after <n> attempts: SocketTimeoutException: payment provider timed out after <n> ms";
        String locks = "gave up after <n> attempts: IllegalStateException: ledger lock for account <n> timed out";
        assertThat(groups(seen.get("groupsBefore"))).as("shape, type and count of each group, largest first")
                .containsExactly(List.of(timeouts, "SocketTimeoutException", "9"),
                        List.of(locks, "IllegalStateException", "3"));
        assertThat(seen.get("rowsFilteredOut").asInt()).isZero();
        assertThat(seen.get("rowsFiltered").asInt()).isEqualTo(12);
        assertThat(seen.get("bodyBeforeReveal").asInt()).isZero();
        assertThat(seen.get("body").asText()).contains(accounts + "-1");
        assertThat(seen.get("dryRun").get(0).asText()).contains(dl(0)).contains("would skip: already processed");
        for (int i = 1; i <= 5; i++) {
            assertThat(seen.get("dryRun").get(i).asText()).contains("would republish");
        }
        assertThat(seen.get("withoutApprover").asText()).contains("400");
        assertThat(seen.get("redrive")).hasSize(5)
                .allSatisfy(r -> assertThat(r.asText()).contains("republish").doesNotContain("would"));
        assertThat(seen.get("progressSeen").asText()).startsWith("redrive job ").containsPattern(" of 5 done");
        assertThat(seen.get("progress").asText()).contains("done, 5 of 5 done").contains("(audit #");
        assertThat(seen.get("audit").get(0).asText()).contains("ana").contains("payment provider is back");
        assertThat(seen.get("rowsAfter").asInt()).isEqualTo(7);
        assertThat(screenshot).isNotEmptyFile();
        assertThat(groups(seen.get("groupsAfter"))).as("after the five").containsExactly(
                List.of(timeouts, "SocketTimeoutException", "4"), List.of(locks, "IllegalStateException", "3"));
        assertThat(seen.get("groupDryRun")).hasSize(3);
        assertThat(seen.get("groupDryRun")).allSatisfy(r -> assertThat(r.asText()).contains("would republish"));
        assertThat(seen.get("groupDryRun").toString()).as("the group's three").contains(dl(9), dl(10), dl(11));
        assertThat(groupsScreenshot).isNotEmptyFile();
        assertThat(seen.get("groupProgress").asText()).contains("done, 3 of 3 done");
        assertThat(seen.get("groupRedrive")).hasSize(3)
                .allSatisfy(r -> assertThat(r.asText()).contains("republish").doesNotContain("would"));
        assertThat(groups(seen.get("groupsLast"))).as("the other group still there").containsExactly(
                List.of(timeouts, "SocketTimeoutException", "4"));
        assertThat(seen.get("auditLast").asText()).contains("ana").contains("ledger lock released");
        assertThat(seen.get("redriveWithoutDryRun").asText()).contains("dry run this group first");
        assertThat(groups(seen.get("groupsUnchanged"))).as("a group redrive without its dry run moves nothing")
                .containsExactly(List.of(timeouts, "SocketTimeoutException", "4"));
        JsonNode queues = CanonicalJson.MAPPER.readTree(get("/ops/queues").body()).get("queues");
        queues.forEach(q -> assertThat(q.get("oldest_age_seconds").isNull()).as("%s", q)
                .isEqualTo(!q.get("queue").asText().equals(QUEUE)));

        Awaitility.await("the five processed").atMost(Duration.ofSeconds(30)).until(() -> {
            for (int i = 1; i <= 5; i++) {
                if (balance(i).compareTo(BigDecimal.ONE) != 0) {
                    return false;
                }
            }
            return true;
        });
        Awaitility.await("the lock timeouts' group processed").atMost(Duration.ofSeconds(30)).until(() ->
                processed(12) == 9);
        assertThat(balance(0)).as("processed once, not redriven").isEqualByComparingTo(BigDecimal.ONE);
        for (int i = 6; i < 9; i++) {
            assertThat(balance(i)).as("account %d: not selected, in the other group", i)
                    .isEqualByComparingTo(BigDecimal.ZERO);
        }
        for (int i = 9; i < 12; i++) {
            assertThat(balance(i)).as("account %d: redriven with its group, once", i).isEqualByComparingTo(BigDecimal.ONE);
        }
        assertThat(depth()).as("0 and 6..8 still dead-lettered").isEqualTo(4);
    }

    /**
     * A real redrive is a job (issue 29 item 6): 20 dead letters at 4 per second take about 5 s, and the POST answers
     * {@code 202} with the job at once; meanwhile another redrive or a dry run of the queue is {@code 409} naming the
     * job, the job shows its progress, then done with every result; all 20 processed exactly once.
     */
    @Test
    @org.junit.jupiter.api.Tag("slow") // the full tier: how a job reports progress; the kill and stop tests stay in verify
    void aRedriveRunsAsAJobWhosePostAnswersAtOnceAndWhichShowsProgressThenDone() throws Exception {
        int n = 20;
        Map<String, Object> request = serveWithDeadLetters("redrive-job", n);
        List<String> all = all(n);
        long start = System.nanoTime();
        HttpResponse<byte[]> accepted = HTTP.send(post("/ops/redrive", request), HttpResponse.BodyHandlers
                .ofByteArray());
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        String answer = new String(accepted.body(), StandardCharsets.UTF_8);
        assertThat(took).as("the POST answers before the redrive (about 5 s) is done; %s", answer)
                .isLessThan(Duration.ofMillis(1500));
        assertThat(accepted.statusCode()).as(answer).isEqualTo(202);
        JsonNode job = CanonicalJson.MAPPER.readTree(accepted.body());
        String id = job.get("job").asText();
        assertThat(accepted.headers().firstValue("Location")).hasValue("/ops/redrive/jobs/" + id);
        assertThat(job.get("state").asText()).isEqualTo("running");
        assertThat(job.get("total").asInt()).isEqualTo(n);

        for (Map<String, Object> other : List.<Map<String, Object>>of(Map.of("queue", QUEUE, "ids", all.subList(15, n),
                "approver", "bo", "reason", "again"), Map.of("queue", QUEUE, "ids", all, "dry_run", true))) {
            HttpResponse<byte[]> refused = HTTP.send(post("/ops/redrive", other), HttpResponse.BodyHandlers
                    .ofByteArray());
            assertThat(refused.statusCode()).as("while the job runs").isEqualTo(409);
            assertThat(new String(refused.body(), StandardCharsets.UTF_8)).contains(id);
        }
        Awaitility.await("the job reports progress").atMost(Duration.ofSeconds(30)).until(() -> {
            JsonNode j = job(id);
            return j.get("state").asText().equals("running") && j.get("done").asInt() > 0;
        });
        Awaitility.await("the job done").atMost(Duration.ofSeconds(60))
                .until(() -> !job(id).get("state").asText().equals("running"));
        JsonNode done = job(id);
        assertThat(done.get("state").asText()).as(done.toString()).isEqualTo("done");
        assertThat(done.get("done").asInt()).isEqualTo(n);
        assertThat(done.get("results")).hasSize(n).allSatisfy(r -> assertThat(r.get("action").asText())
                .isEqualTo("REPUBLISH"));
        JsonNode audit = latestAudit();
        assertThat(done.get("audit_id").asLong()).as("the job names its audit entry").isEqualTo(audit.get("id")
                .asLong());
        assertThat(audit.get("state").asText()).isEqualTo("done");
        assertThat(get("/ops/redrive/jobs/" + UUID.randomUUID()).statusCode()).as("an unknown job").isEqualTo(404);

        assertEachProcessedOnce(n);
        assertThat(depth()).isZero();
    }

    /**
     * 20 dead letters redriven at 4 per second (a job); serve is SIGKILLed once some are processed. After the restart
     * each message is processed at most once, and processed or still in the dead-letter queue; the audit shows the
     * redrive cut short ("running", what it moved); the same request sent again finishes the redrive (what moved is not
     * found, what was processed is skipped): all 20 exactly once.
     */
    @Test
    void aBulkRedriveInterruptedBySigkillLosesNothingAndRunsNothingTwice() throws Exception {
        int n = 20;
        Map<String, Object> request = serveWithDeadLetters("redrive-kill-1", n);
        String cut = submitted(request);
        Awaitility.await("some redriven and processed").atMost(Duration.ofSeconds(30))
                .until(() -> processed(n) >= 3);
        assertThat(job(cut).get("state").asText()).as("the job still runs").isEqualTo("running");
        assertThat(serve.kill()).isEqualTo(ChildJvm.SIGKILLED);
        int before = processed(n);
        assertThat(before).as("killed mid-way").isBetween(3, n - 1);

        startServe("redrive-kill-2", 50);
        long left = depth();
        for (int i = 0; i < n; i++) {
            assertThat(balance(i)).as("message %d at most once", i).isLessThanOrEqualTo(BigDecimal.ONE);
        }
        Awaitility.await("every moved message processed").atMost(Duration.ofSeconds(30))
                .until(() -> processed(n) + depth() >= n);
        assertThat(processed(n) + left).as("none lost: processed or still dead-lettered").isGreaterThanOrEqualTo(n);
        assertThat(get("/ops/redrive/jobs/" + cut).statusCode()).as("jobs live in the process").isEqualTo(404);

        // the interrupted redrive is on record (the audit is in the store): started, cut short, what it moved
        JsonNode cutShort = latestAudit();
        assertThat(cutShort.get("state").asText()).isEqualTo("running");
        assertThat(cutShort.get("ids").asInt()).isEqualTo(n);
        assertThat(cutShort.get("approver").asText()).isEqualTo("ana");
        // a dead letter's result is recorded after its republish is confirmed, and the consumer may process the copy
        // in between: the kill can fall there, for the one dead letter in flight (a redrive moves one at a time)
        assertThat(cutShort.get("results").size()).as("recorded as it went").isBetween(before - 1, n - 1);

        JsonNode resumed = awaitEnded(submitted(request));
        assertThat(resumed.get("state").asText()).as(resumed.toString()).isEqualTo("done");
        assertEachProcessedOnce(n);
        for (JsonNode r : resumed.get("results")) {
            String action = r.get("action").asText();
            assertThat(r.get("found").asBoolean() ? List.of("REPUBLISH", "SKIP_ALREADY_PROCESSED")
                    : List.of("SKIP_NO_ID")).as("resumed %s", r).contains(action);
        }
    }

    /**
     * serve stopped (SIGTERM) while a redrive job runs: the job stops between two dead letters, so each message was
     * moved (and is processed once, at the latest after the restart) or is still in the dead-letter queue, never both;
     * the audit records the redrive failed ("stopped on request") with what it moved; the same request finishes it.
     */
    @Test
    void aRedriveJobStopsBetweenTwoDeadLettersWhenServeStops() throws Exception {
        int n = 20;
        Map<String, Object> request = serveWithDeadLetters("redrive-stop-1", n);
        String id = submitted(request);
        Awaitility.await("three moved").atMost(Duration.ofSeconds(30)).until(() -> job(id).get("done").asInt() >= 3);
        assertThat(serve.terminate()).as("exit status after SIGTERM").isIn(0, 143);

        startServe("redrive-stop-2", 50);
        JsonNode stopped = latestAudit();
        assertThat(stopped.get("state").asText()).as(stopped.toString()).isEqualTo("failed");
        assertThat(stopped.get("error").asText()).contains("stopped on request");
        int moved = stopped.get("results").size();
        assertThat(moved).as("stopped mid-way").isBetween(3, n - 1);
        Awaitility.await("every moved message processed").atMost(Duration.ofSeconds(30))
                .until(() -> processed(n) == moved);
        assertThat(depth()).as("the others still dead-lettered, none in both places").isEqualTo(n - moved);

        JsonNode resumed = awaitEnded(submitted(request));
        assertThat(resumed.get("state").asText()).as(resumed.toString()).isEqualTo("done");
        assertEachProcessedOnce(n);
        assertThat(depth()).as("none left dead-lettered").isZero();
    }

    /** The row of {@code rows} (arrays of cell texts) whose first cell is {@code first}. */
    private static JsonNode row(JsonNode rows, String first) {
        for (JsonNode r : rows) {
            if (r.get(0).asText().equals(first)) {
                return r;
            }
        }
        throw new AssertionError("no row " + first + " in " + rows);
    }

    /** Failure-group rows as shape, exception type and count. */
    private static List<List<String>> groups(JsonNode rows) {
        List<List<String>> out = new ArrayList<>();
        rows.forEach(r -> out.add(List.of(r.get(0).asText(), r.get(1).asText(), r.get(2).asText())));
        return out;
    }

    /** As the page writes an age (its ageText). */
    private static String ageText(long s) {
        return s < 120 ? s + " s" : s < 7200 ? Math.round(s / 60.0) + " min" : s < 172800 ? Math.round(s / 3600.0)
                + " h" : Math.round(s / 86400.0) + " d";
    }

    /** serve redriving 4 dead letters per second, with {@code n} dead letters; the request that redrives them all. */
    private Map<String, Object> serveWithDeadLetters(String log, int n) throws Exception {
        startServe(log, 4);
        DeadLetterInjector.inject(vhost.uri(), QUEUE, prefix, accounts, n, "gave up: payment provider timed out");
        awaitDepth(n);
        return Map.of("queue", QUEUE, "ids", all(n), "approver", "ana", "reason", "provider back");
    }

    /** Each of the first {@code n} messages processed exactly once. */
    private void assertEachProcessedOnce(int n) throws Exception {
        Awaitility.await("all processed").atMost(Duration.ofSeconds(30)).until(() -> processed(n) == n);
        for (int i = 0; i < n; i++) {
            assertThat(balance(i)).as("message %d exactly once", i).isEqualByComparingTo(BigDecimal.ONE);
        }
    }

    private List<String> all(int n) {
        List<String> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            all.add(dl(i));
        }
        return all;
    }

    /** POSTs a real redrive; the id of the job it started. */
    private String submitted(Map<String, Object> request) throws IOException, InterruptedException {
        HttpResponse<byte[]> accepted = HTTP.send(post("/ops/redrive", request), HttpResponse.BodyHandlers
                .ofByteArray());
        assertThat(accepted.statusCode()).as(new String(accepted.body(), StandardCharsets.UTF_8)).isEqualTo(202);
        return CanonicalJson.MAPPER.readTree(accepted.body()).get("job").asText();
    }

    private JsonNode awaitEnded(String id) throws IOException, InterruptedException {
        Awaitility.await("job " + id + " ended").atMost(Duration.ofSeconds(60))
                .until(() -> !job(id).get("state").asText().equals("running"));
        return job(id);
    }

    private JsonNode latestAudit() throws IOException, InterruptedException {
        return CanonicalJson.MAPPER.readTree(get("/ops/audit").body()).get("entries").get(0);
    }

    private void startServe(String log, double redriveRate) throws Exception {
        Map<String, String> env = new HashMap<>(TestEnvironment.settings(schema, "IDEMKIT_RABBIT_URI", vhost.uri(),
                "IDEMKIT_OPERATOR_KEYS", "ana=" + OPERATOR_KEY, "IDEMKIT_HTTP_PORT", "0",
                "IDEMKIT_RABBIT_QUEUE_TYPE", "classic"));
        serve = CrashJvms.start("dev.idemkit.app.Idemkit", List.of("serve", "--redrive-rate",
                Double.toString(redriveRate)), Map.of(), env, "console-serve-" + log);
        String line = serve.awaitLine("idemkit HTTP on ", Duration.ofSeconds(90)).orElseThrow(() ->
                new IllegalStateException("serve did not start; log: " + serve.log()));
        String url = line.substring("idemkit HTTP on ".length()).split("\\s+")[0];
        base = URI.create(url.replace("localhost", "127.0.0.1"));
    }

    private void processAgainThroughTheQueue(int i) throws Exception {
        com.rabbitmq.client.ConnectionFactory f = new com.rabbitmq.client.ConnectionFactory();
        f.setUri(vhost.uri());
        try (com.rabbitmq.client.Connection c = f.newConnection(); com.rabbitmq.client.Channel ch = c.createChannel()) {
            ch.confirmSelect();
            ch.basicPublish("", QUEUE, new com.rabbitmq.client.AMQP.BasicProperties.Builder()
                    .messageId(DeadLetterInjector.messageId(prefix, i)).deliveryMode(2).build(),
                    DeadLetterInjector.credit(accounts + "-" + i));
            ch.waitForConfirmsOrDie(10_000);
        }
        Awaitility.await("the copy processed").atMost(Duration.ofSeconds(30))
                .until(() -> balance(i).compareTo(BigDecimal.ONE) == 0);
    }

    private String dl(int i) {
        return "dl-" + prefix + "-" + i;
    }

    private void awaitDepth(long n) {
        Awaitility.await(n + " dead letters").atMost(Duration.ofSeconds(30)).until(() -> depth() == n);
    }

    private long depth() throws IOException, InterruptedException {
        HttpResponse<byte[]> r = HTTP.send(HttpRequest.newBuilder(base.resolve("/ops/dead-letters?queue=" + QUEUE
                + "&limit=1")).header("Authorization", "Bearer " + OPERATOR_KEY).GET().build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(r.statusCode()).as(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo(200);
        return CanonicalJson.MAPPER.readTree(r.body()).get("depth").asLong();
    }

    private HttpResponse<byte[]> get(String path) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(base.resolve(path)).header("Authorization", "Bearer " + OPERATOR_KEY)
                .GET().build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private JsonNode job(String id) throws IOException, InterruptedException {
        HttpResponse<byte[]> r = get("/ops/redrive/jobs/" + id);
        assertThat(r.statusCode()).as(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo(200);
        return CanonicalJson.MAPPER.readTree(r.body());
    }

    private HttpRequest post(String path, Object body) throws IOException {
        return HttpRequest.newBuilder(base.resolve(path)).header("Authorization", "Bearer " + OPERATOR_KEY)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(CanonicalJson.MAPPER.writeValueAsBytes(body))).build();
    }

    /** How many of the first {@code n} accounts were credited. */
    private int processed(int n) throws Exception {
        int count = 0;
        for (int i = 0; i < n; i++) {
            if (balance(i).signum() > 0) {
                count++;
            }
        }
        return count;
    }

    private BigDecimal balance(int i) throws Exception {
        try (Connection c = TestEnvironment.connect(); PreparedStatement ps = c.prepareStatement(
                "SELECT balance FROM " + schema + ".accounts WHERE id = ?")) {
            ps.setString(1, accounts + "-" + i);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getBigDecimal(1) : BigDecimal.ZERO;
            }
        } catch (java.sql.SQLException e) {
            return BigDecimal.ZERO; // the schema's tables are created by serve at its start
        }
    }
}
