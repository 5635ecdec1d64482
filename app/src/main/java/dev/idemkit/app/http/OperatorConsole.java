package dev.idemkit.app.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.idemkit.app.json.CanonicalJson;
import dev.idemkit.domain.Message;
import dev.idemkit.domain.Printable;
import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.deadletter.DeadLetter;
import dev.idemkit.domain.deadletter.FailureGroup;
import dev.idemkit.domain.deadletter.FailureShape;
import dev.idemkit.domain.deadletter.RedriveWindow;
import dev.idemkit.domain.httpkey.ClientId;
import dev.idemkit.ports.in.DeadLetters;
import dev.idemkit.ports.in.Redrives;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.DeadLetterEntry;
import dev.idemkit.ports.out.RedriveAudit;
import dev.idemkit.ports.service.Problems;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dead-letter console ({@code GET /console}, a page) and the JSON API it uses ({@code /ops/...}), protected by
 * operator keys ({@code Authorization: Bearer <operator key>}; a client's API key is not one):
 * <ul>
 *   <li>{@code GET /ops/queues}: the app's queues with their dead-letter depth, alert threshold and the age of the
 *       oldest dead letter (the head of the queue, counted from its first failed attempt);
 *   <li>{@code GET /ops/dead-letters?queue=Q[&reason=text][&min_age_seconds=N][&limit=N]}: dead letters, oldest
 *       first, with origin, reason, attempts and age, filtered by a reason substring and a minimum age; the age is
 *       counted from the message's first failed attempt (as the dedup window is: {@code RedriveWindow.age}), the
 *       time it was dead-lettered is given beside it;
 *   <li>{@code GET /ops/dead-letters/{id}?queue=Q[&reveal=true]}: one, with its headers and attempt history; the
 *       body only with {@code reveal=true}, as sanitized text (control characters escaped, at most 16 KiB);
 *   <li>{@code GET /ops/failure-groups?queue=Q}: the oldest {@value #MAX_LISTED} dead letters grouped by the shape of
 *       their reasons ({@link FailureShape}: exception type and message with its variable parts as placeholders),
 *       largest first, each with its count, first and last seen, an example reason and its ids; {@code scanned} and
 *       {@code complete} say whether that was the whole queue;
 *   <li>{@code POST /ops/redrive} {@code {"queue", "ids": [...] | "group": "<shape>", "approver", "reason", "dry_run",
 *       "past_window_approver", "past_window_reason"}} (approver and reason required unless {@code dry_run}; a
 *       {@code group} stands for the ids the group holds when the request arrives, among the same oldest
 *       {@value #MAX_LISTED} the groups are read from): what a
 *       redrive would do ({@code dry_run: true}, answered at once: republish, or skip because the inbox already holds the
 *       key, the id is unusable, or it is older than the dedup window), or does it as a job ({@link RedriveJobs}):
 *       {@code 202} with {@code {"job", "state": "running", "done", "total", "audit_id"}} and {@code Location} once it
 *       began, {@code 409} naming the running job while the queue has one; recorded in the audit with the operator;
 *   <li>{@code GET /ops/redrive/jobs/{id}}: a job's state (running, done, failed), how many of how many are done, and
 *       the results as the redrive reported them ({@code error} and {@code not_attempted} when it stopped);
 *   <li>{@code GET /ops/audit}: the last 100 redrives and dry runs, newest first, as {@link RedriveAudit} recorded them.
 * </ul>
 * The console routes and speaks JSON; a redrive is the {@link Redrives} operation's (the one the command line calls),
 * run by the console on its own threads so that no HTTP worker waits for it; closing the console stops its jobs
 * between two dead letters. One dead letter at a time (republish, confirmed, then removal from the dead-letter queue) at its rate, per queue one
 * at a time, audited; interrupted anywhere, each message is back in its queue, still in the dead-letter queue, or
 * (killed between the two steps) in both, and the inbox makes the second copy a duplicate. Sending the same request
 * again resumes it: what was moved is no longer found, what was processed meanwhile is skipped. A second approval
 * ({@code past_window_approver}, {@code past_window_reason}) also redrives dead letters older than the dedup window.
 */
public final class OperatorConsole implements HttpHandler, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(OperatorConsole.class);
    static final int MAX_LISTED = 500;
    static final int MAX_REVEALED_CHARS = 16 * 1024;
    static final int MAX_REQUEST_BYTES = 256 * 1024;
    /** Approver and reason travel in the republished message's headers: kept short. */
    static final int MAX_APPROVAL_CHARS = 200;

    private final Map<String, DeadLetters> queues;
    private final Redrives redrives;
    private final ApiKeys operators;
    private final int alertThreshold;
    private final Clock clock;
    private final RedriveJobs jobs;

    /**
     * @param queues the app's work queues, each with the dead-letter operations of its consumer (what the console lists
     *     and shows)
     * @param redrives the redrive operation (locks, rate, audit, tracing): the one the command line calls too
     */
    public OperatorConsole(Map<String, DeadLetters> queues, Redrives redrives, ApiKeys operators, int alertThreshold,
            Clock clock) {
        this.queues = Map.copyOf(queues);
        this.redrives = Objects.requireNonNull(redrives, "redrives");
        this.operators = Objects.requireNonNull(operators, "operators");
        this.alertThreshold = alertThreshold;
        this.clock = Objects.requireNonNull(clock, "clock");
        this.jobs = new RedriveJobs(redrives, redrives.queues().size());
    }

    /** Stops the running redrive jobs between two dead letters (bounded), and refuses new ones. */
    @Override
    public void close() {
        jobs.close();
    }

    /** {@code /console} and {@code /ops/...} to {@code console}, everything else to {@code api}. */
    public static HttpHandler routes(OperatorConsole console, HttpHandler api) {
        return ex -> {
            String path = ex.getRequestURI().getPath();
            if (path.equals("/console") || path.startsWith("/ops/")) {
                console.handle(ex);
            } else {
                api.handle(ex);
            }
        };
    }

    /** The newest 100 recorded redrives and dry runs, newest first. */
    public List<RedriveAudit.Entry> audit() {
        return redrives.audit(100);
    }

    @Override
    public void handle(HttpExchange ex) throws IOException {
        // the exchange is closed after the error answer too (a try-with-resources would close it before its catch)
        try (ex) {
            try {
                route(ex);
            } catch (IllegalArgumentException e) {
                problem(ex, 400, "Bad Request", "invalid-request", e.getMessage());
            } catch (RuntimeException e) {
                LOG.error("console request failed: {}", e.toString());
                problem(ex, 500, "Internal Server Error", "internal", "The operation failed: " + e.getMessage());
            }
        }
    }

    private void route(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getPath();
        String method = ex.getRequestMethod();
        if (path.equals("/console")) {
            page(ex);
            return;
        }
        Optional<ClientId> operator = operators.authenticate(ex.getRequestHeaders().getFirst("Authorization"));
        if (operator.isEmpty()) {
            ex.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"idemkit operators\"");
            problem(ex, 401, "Unauthorized", "unauthorized",
                    "Authorization: Bearer <operator key> is missing or unknown (client API keys are not operator"
                            + " keys).");
            return;
        }
        Map<String, String> query = HttpExchanges.query(ex.getRequestURI().getRawQuery());
        if (path.equals("/ops/queues") && method.equals("GET")) {
            queues(ex);
        } else if (path.equals("/ops/dead-letters") && method.equals("GET")) {
            list(ex, query);
        } else if (path.equals("/ops/failure-groups") && method.equals("GET")) {
            groups(ex, query);
        } else if (path.startsWith("/ops/dead-letters/") && method.equals("GET")) {
            show(ex, query, path.substring("/ops/dead-letters/".length())); // getPath() is decoded once already
        } else if (path.equals("/ops/redrive") && method.equals("POST")) {
            redrive(ex, operator.get());
        } else if (path.startsWith("/ops/redrive/jobs/") && method.equals("GET")) {
            job(ex, path.substring("/ops/redrive/jobs/".length()));
        } else if (path.equals("/ops/audit") && method.equals("GET")) {
            auditLog(ex);
        } else {
            problem(ex, 404, "Not Found", "not-found", "No operation " + method + " " + path + ".");
        }
    }

    private void queues(HttpExchange ex) throws IOException {
        ObjectNode root = CanonicalJson.MAPPER.createObjectNode();
        ArrayNode items = root.putArray("queues");
        for (String q : queues.keySet().stream().sorted().toList()) {
            long depth = queues.get(q).depth(q);
            ObjectNode item = items.addObject().put("queue", q).put("depth", depth)
                    .put("alert_threshold", alertThreshold).put("alert", depth > alertThreshold);
            putOrNull(item, "oldest_age_seconds", queues.get(q).oldestAge(q).map(Duration::toSeconds));
        }
        json(ex, 200, root);
    }

    /**
     * The failure groups of a queue's oldest {@link #MAX_LISTED} dead letters: what a group redrive picks from too, so the
     * ids a page showed for a group are the ones a redrive of it takes (unless the queue changed meanwhile).
     */
    private void groups(HttpExchange ex, Map<String, String> query) throws IOException {
        String queue = query.get("queue");
        DeadLetters dlq = queueOr404(ex, queue);
        if (dlq == null) {
            return;
        }
        DeadLetters.FailureGroups read = dlq.groups(queue, MAX_LISTED);
        ObjectNode root = CanonicalJson.MAPPER.createObjectNode();
        root.put("queue", queue).put("depth", dlq.depth(queue)).put("scanned", read.scanned())
                .put("complete", read.complete());
        ArrayNode items = root.putArray("groups");
        for (FailureGroup g : read.groups()) {
            ObjectNode n = items.addObject().put("group", g.shape().text());
            putOrNull(n, "exception_type", g.shape().exceptionType());
            n.put("count", g.count()).put("first_seen", g.firstSeen().toString())
                    .put("last_seen", g.lastSeen().toString()).put("example_reason", sanitize(g.exampleReason(), 2048));
            ArrayNode ids = n.putArray("ids");
            g.deadLetterIds().forEach(id -> ids.add(sanitize(id, 256)));
        }
        json(ex, 200, root);
    }

    /** The dead-letter operations of {@code queue}; null, once a 404 has answered, when the console has no such queue. */
    private DeadLetters queueOr404(HttpExchange ex, String queue) throws IOException {
        DeadLetters dlq = queue == null ? null : queues.get(queue);
        if (dlq == null) {
            problem(ex, 404, "Not Found", "unknown-queue", "No queue " + printable(queue) + "; GET /ops/queues lists them.");
        }
        return dlq;
    }

    /** A field that may be unknown: {@code null} in the JSON then, rather than absent, so a reader sees it exists. */
    private static void putOrNull(ObjectNode node, String field, Optional<?> value) {
        node.set(field, value.<JsonNode>map(CanonicalJson.MAPPER::valueToTree).orElse(node.nullNode()));
    }

    private void list(HttpExchange ex, Map<String, String> query) throws IOException {
        String queue = query.get("queue");
        DeadLetters dlq = queueOr404(ex, queue);
        if (dlq == null) {
            return;
        }
        String reason = query.getOrDefault("reason", "").toLowerCase(Locale.ROOT);
        long minAge = number(query, "min_age_seconds", 0, Long.MAX_VALUE, 0);
        int limit = (int) number(query, "limit", 1, MAX_LISTED, 100);
        Instant now = clock.now();
        ObjectNode root = CanonicalJson.MAPPER.createObjectNode();
        long depth = dlq.depth(queue);
        root.put("queue", queue).put("depth", depth).put("alert_threshold", alertThreshold)
                .put("alert", depth > alertThreshold);
        ArrayNode items = root.putArray("dead_letters");
        for (DeadLetterEntry e : dlq.inspect(queue, MAX_LISTED)) {
            DeadLetter d = e.deadLetter();
            long age = RedriveWindow.age(d, now).toSeconds();
            if (age < minAge || !d.reason().toLowerCase(Locale.ROOT).contains(reason)) {
                continue;
            }
            if (items.size() >= limit) {
                break;
            }
            summary(items.addObject(), e, age);
        }
        json(ex, 200, root);
    }

    private static void summary(ObjectNode node, DeadLetterEntry e, long ageSeconds) {
        DeadLetter d = e.deadLetter();
        node.put("id", sanitize(e.id(), 256)).put("message_id", sanitize(String.valueOf(d.original().rawId()), 256))
                .put("origin_queue", sanitize(d.originQueue(), 256)).put("reason", sanitize(d.reason(), 2048))
                .put("attempts", d.attempts().size())
                .put("dead_lettered_at", d.deadLetteredAt().toString()).put("age_seconds", ageSeconds);
    }

    private void show(HttpExchange ex, Map<String, String> query, String id) throws IOException {
        String queue = query.get("queue");
        DeadLetters dlq = queue == null ? null : queues.get(queue);
        if (dlq == null) {
            problem(ex, 404, "Not Found", "unknown-queue", "No queue " + printable(queue) + ".");
            return;
        }
        Optional<DeadLetterEntry> found = dlq.show(queue, id);
        if (found.isEmpty()) {
            problem(ex, 404, "Not Found", "unknown-dead-letter", "No dead letter " + printable(id) + " in the"
                    + " dead-letter queue of " + queue + ".");
            return;
        }
        DeadLetter d = found.get().deadLetter();
        ObjectNode root = CanonicalJson.MAPPER.createObjectNode();
        summary(root, found.get(), RedriveWindow.age(d, clock.now()).toSeconds());
        ObjectNode headers = root.putObject("headers");
        new java.util.TreeMap<>(d.original().headers()).forEach((k, v) -> headers.put(sanitize(k, 256),
                sanitize(v, 1024)));
        ArrayNode attempts = root.putArray("attempt_history");
        for (AttemptRecord a : d.attempts()) {
            attempts.addObject().put("attempt", a.number()).put("at", a.at().toString())
                    .put("error", sanitize(a.error(), 2048));
        }
        Message m = d.original();
        root.put("body_bytes", m.size());
        if ("true".equals(query.get("reveal"))) {
            root.put("body", sanitize(new String(m.body(), StandardCharsets.UTF_8), MAX_REVEALED_CHARS));
        }
        json(ex, 200, root);
    }

    private void redrive(HttpExchange ex, ClientId operator) throws IOException {
        JsonNode body = readJson(ex);
        String queue = field(body, "queue", 255);
        if (queue == null || !redrives.queues().contains(queue)) {
            problem(ex, 404, "Not Found", "unknown-queue", "No queue " + printable(queue) + ".");
            return;
        }
        String approver = field(body, "approver", MAX_APPROVAL_CHARS);
        String reason = field(body, "reason", MAX_APPROVAL_CHARS);
        JsonNode dryRunNode = body.get("dry_run");
        if (dryRunNode != null && !dryRunNode.isNull() && !dryRunNode.isBoolean()) {
            throw new IllegalArgumentException("\"dry_run\" must be true or false");
        }
        boolean dryRun = dryRunNode != null && dryRunNode.asBoolean();
        boolean approved = approver != null && !approver.isBlank() && reason != null && !reason.isBlank();
        if (dryRun && !approved) { // a dry run changes nothing: it needs no approval
            approver = "(dry run)";
            reason = "(dry run)";
        } else if (!approved) {
            problem(ex, 400, "Bad Request", "approval-required", "A redrive needs \"approver\" (who approves it) and"
                    + " \"reason\" (why), both non-blank; they are recorded with it.");
            return;
        }
        Optional<Approval> pastWindow = pastWindow(body);
        JsonNode idNodes = body.get("ids");
        String group = field(body, "group", FailureShape.MAX_LENGTH);
        boolean byIds = idNodes != null && !idNodes.isNull();
        if (!byIds && group == null) {
            throw new IllegalArgumentException("a redrive names its dead letters by \"ids\" (dead-letter ids), by"
                    + " \"group\" (a failure group's shape, as GET /ops/failure-groups names it) for a dry run, or by"
                    + " both (the ids a group's dry run showed), got neither");
        }
        if (group != null && !byIds && !dryRun) {
            throw new IllegalArgumentException("a failure group's redrive names the ids its dry run showed (\"ids\""
                    + " beside \"group\"): it moves what was approved, never what joined the group since");
        }
        List<String> ids = byIds ? ids(idNodes) : List.of();
        if (group != null) {
            List<String> members = groupIds(queue, group);
            // with ids: only those still in the group (what was moved since is done; nothing new joins)
            ids = byIds ? ids.stream().filter(members::contains).toList() : members;
            if (ids.isEmpty()) {
                problem(ex, 404, "Not Found", "unknown-failure-group", "No failure group " + printable(group)
                        + (byIds ? " holding any of these ids" : "") + " among the oldest " + MAX_LISTED
                        + " dead letters of " + queue + " (already redriven, or never there; GET"
                        + " /ops/failure-groups?queue=" + queue + " lists them).");
                return;
            }
        }
        Redrives.Command command = new Redrives.Command(queue, ids, operator.value(),
                new Approval(approver, reason, clock.now()), pastWindow, dryRun);
        if (dryRun) {
            dryRun(ex, command);
        } else {
            submit(ex, command);
        }
    }

    private static List<String> ids(JsonNode idNodes) {
        if (!idNodes.isArray() || idNodes.isEmpty() || idNodes.size() > MAX_LISTED) {
            throw new IllegalArgumentException("\"ids\" must be an array of 1.." + MAX_LISTED + " dead-letter ids");
        }
        List<String> ids = new ArrayList<>();
        idNodes.forEach(n -> {
            if (!n.isTextual() || n.asText().isBlank() || n.asText().length() > 255
                    || n.asText().chars().anyMatch(Character::isISOControl)) {
                throw new IllegalArgumentException("every id must be a non-blank string of at most 255 characters"
                        + " without control characters");
            }
            ids.add(n.asText());
        });
        return ids;
    }

    /**
     * The ids a failure group holds now, read as {@code GET /ops/failure-groups} reads them; empty when no group has that
     * shape. The redrive then takes them as if they had been listed: the same approvals, job, audit and resumption (sent
     * again, the group no longer holds what was moved).
     */
    private List<String> groupIds(String queue, String group) {
        if (group.isBlank()) {
            throw new IllegalArgumentException("\"group\" must be a failure group's shape, as GET /ops/failure-groups"
                    + " names it");
        }
        DeadLetters dlq = queues.get(queue);
        if (dlq == null) {
            return List.of();
        }
        return dlq.groups(queue, MAX_LISTED).groups().stream().filter(g -> g.shape().text().equals(group)).findFirst()
                .map(FailureGroup::deadLetterIds).orElse(List.of());
    }

    /**
     * A dry run moves nothing and waits for no rate: answered at once, as it always was. It plans under the queue's
     * lock, so while a job of the queue runs it is refused like another redrive (it would wait for the job).
     */
    private void dryRun(HttpExchange ex, Redrives.Command command) throws IOException {
        Optional<RedriveJobs.Job> running = jobs.runningOn(command.queue());
        if (running.isPresent()) {
            busy(ex, running.get());
            return;
        }
        Redrives.Outcome outcome = redrives.redrive(command);
        if (outcome.nothingFound()) {
            noneFound(ex, command);
            return;
        }
        ObjectNode root = CanonicalJson.MAPPER.createObjectNode();
        root.put("queue", command.queue()).put("dry_run", true).put("audit_id", outcome.auditId().getAsLong());
        RedriveJobs.results(root, outcome.results());
        RedriveJobs.failure(root, outcome);
        json(ex, outcome.failure().isEmpty() ? 200 : 503, root);
    }

    /**
     * A real redrive becomes a job: {@code 202} with it once it began (planned and recorded in the audit), {@code 409}
     * while another job of the queue runs; refused or none of its ids found, answered as before (400, 404).
     */
    private void submit(HttpExchange ex, Redrives.Command command) throws IOException {
        RedriveJobs.Submission submission;
        try {
            submission = jobs.submit(command);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting the redrive");
        }
        if (submission instanceof RedriveJobs.Submission.Busy b) {
            busy(ex, b.running());
            return;
        }
        RedriveJobs.Job job = ((RedriveJobs.Submission.Started) submission).job();
        if (job.error().isPresent() && job.auditId().isEmpty()) {
            jobs.forget(job);
            throw job.error().get(); // refused before it began: 400 for a refused approval, as before
        }
        if (job.nothingFound()) {
            jobs.forget(job);
            noneFound(ex, command);
            return;
        }
        LOG.info("redrive job={} queue={} operator={} ids={} audit={}", job.id, command.queue(),
                Printable.id(command.operator()), command.ids().size(), job.auditId().isPresent()
                        ? job.auditId().getAsLong() : "not yet");
        ex.getResponseHeaders().set("Location", "/ops/redrive/jobs/" + job.id);
        json(ex, 202, job.json());
    }

    private void job(HttpExchange ex, String id) throws IOException {
        Optional<RedriveJobs.Job> job = jobs.find(id);
        if (job.isEmpty()) {
            problem(ex, 404, "Not Found", "unknown-job", "No redrive job " + printable(id) + " (the console keeps the"
                    + " last " + RedriveJobs.KEPT + "; GET /ops/audit has every redrive).");
            return;
        }
        json(ex, 200, job.get().json());
    }

    private static void busy(HttpExchange ex, RedriveJobs.Job running) throws IOException {
        ex.getResponseHeaders().set("Location", "/ops/redrive/jobs/" + running.id);
        problem(ex, 409, "Conflict", "redrive-running", "A redrive of " + running.queue() + " is running: job "
                + running.id + " (" + running.done() + " of " + running.total() + " done; GET /ops/redrive/jobs/"
                + running.id + "). One redrive per queue at a time: send this again once it has ended.");
    }

    private static void noneFound(HttpExchange ex, Redrives.Command command) throws IOException {
        problem(ex, 404, "Not Found", "unknown-dead-letter", "None of the " + command.ids().size() + " ids is in the"
                + " dead-letter queue of " + command.queue() + " (already redriven, or never there).");
    }

    /**
     * The second approval that also lets through dead letters older than the dedup window: {@code past_window_approver}
     * and {@code past_window_reason}, both or neither, by another person than the first approver.
     */
    private static Optional<Approval> pastWindow(JsonNode body) {
        String by = field(body, "past_window_approver", MAX_APPROVAL_CHARS);
        String why = field(body, "past_window_reason", MAX_APPROVAL_CHARS);
        if ((by == null || by.isBlank()) && (why == null || why.isBlank())) {
            return Optional.empty();
        }
        if (by == null || by.isBlank() || why == null || why.isBlank()) {
            throw new IllegalArgumentException("a redrive past the dedup window needs both \"past_window_approver\""
                    + " and \"past_window_reason\"");
        }
        return Optional.of(new Approval(by, why, java.time.Instant.now()));
    }

    private void auditLog(HttpExchange ex) throws IOException {
        ObjectNode root = CanonicalJson.MAPPER.createObjectNode();
        ArrayNode items = root.putArray("entries");
        for (RedriveAudit.Entry e : redrives.audit(100)) {
            ObjectNode n = items.addObject().put("id", e.id()).put("at", e.at().toString()).put("operator", e.operator())
                    .put("approver", e.approver()).put("reason", e.reason()).put("queue", e.queue())
                    .put("dry_run", e.dryRun()).put("ids", e.ids()).put("state", e.state());
            if (e.error() != null) {
                n.put("error", e.error());
            }
            ArrayNode rs = n.putArray("results");
            e.results().forEach(r -> rs.addObject().put("id", r.deadLetterId()).put("found", r.found())
                    .put("action", r.action()));
        }
        json(ex, 200, root);
    }

    private static void page(HttpExchange ex) throws IOException {
        ex.getResponseHeaders().set("Content-Type", "text/html; charset=utf-8");
        ex.getResponseHeaders().set("Content-Security-Policy", Page.CSP);
        ex.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
        ex.getResponseHeaders().set("Referrer-Policy", "no-referrer");
        write(ex, 200, Page.HTML);
    }

    /** The page, read once, and a policy that runs its one inline script by hash and nothing else. */
    static final class Page {
        static final byte[] HTML = load();
        static final String CSP = "default-src 'none'; script-src '" + scriptHash() + "'; style-src 'unsafe-inline';"
                + " connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

        private static byte[] load() {
            try (InputStream in = OperatorConsole.class.getResourceAsStream("/console/index.html")) {
                if (in == null) {
                    throw new IllegalStateException("console page missing from the jar");
                }
                return in.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        private static String scriptHash() {
            String html = new String(HTML, StandardCharsets.UTF_8);
            int open = html.indexOf("<script>");
            int close = html.indexOf("</script>");
            if (open < 0 || close < open || html.indexOf("<script", open + 1) >= 0) {
                throw new IllegalStateException("the console page must hold exactly one inline script");
            }
            try {
                byte[] digest = java.security.MessageDigest.getInstance("SHA-256").digest(
                        html.substring(open + "<script>".length(), close).getBytes(StandardCharsets.UTF_8));
                return "sha256-" + java.util.Base64.getEncoder().encodeToString(digest);
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static JsonNode readJson(HttpExchange ex) throws IOException {
        byte[] raw = HttpExchanges.body(ex, MAX_REQUEST_BYTES);
        if (raw == null) {
            throw new IllegalArgumentException("the request body exceeds " + MAX_REQUEST_BYTES + " bytes");
        }
        try {
            JsonNode node = CanonicalJson.MAPPER.readTree(raw);
            if (node == null || !node.isObject()) {
                throw new IllegalArgumentException("the request body must be a JSON object");
            }
            return node;
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException("the request body is not JSON: " + e.getOriginalMessage());
        }
    }

    /** A string field of at most {@code max} characters, or null when absent. */
    private static String field(JsonNode body, String name, int max) {
        JsonNode n = body.get(name);
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isTextual() || n.asText().length() > max) {
            throw new IllegalArgumentException("\"" + name + "\" must be a string of at most " + max + " characters");
        }
        return n.asText();
    }

    private static long number(Map<String, String> query, String name, long min, long max, long dflt) {
        String v = query.get(name);
        if (v == null || v.isEmpty()) {
            return dflt;
        }
        try {
            long n = Long.parseLong(v);
            if (n < min || n > max) {
                throw new IllegalArgumentException(name + " must lie in " + min + ".." + max + ", got " + n);
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a whole number, got '" + printable(v) + "'");
        }
    }

    /** Text from a dead letter for the page: {@link Printable#lines} (line feeds and tabs kept, nothing else raw). */
    static String sanitize(String s, int max) {
        return Printable.lines(s, max);
    }

    private static String printable(String s) {
        return s == null ? "(none)" : sanitize(s, 200);
    }

    private static void problem(HttpExchange ex, int status, String title, String type, String detail)
            throws IOException {
        HttpExchanges.problem(ex, status, title, type, detail);
    }

    private static void json(HttpExchange ex, int status, ObjectNode node) throws IOException {
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.getResponseHeaders().set("Cache-Control", "no-store");
        write(ex, status, CanonicalJson.MAPPER.writeValueAsBytes(node));
    }

    private static void write(HttpExchange ex, int status, byte[] body) throws IOException {
        HttpExchanges.write(ex, status, body);
    }
}
