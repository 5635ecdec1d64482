package dev.idemkit.app.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.idemkit.app.json.CanonicalJson;
import dev.idemkit.ports.in.DeadLetters.RedriveResult;
import dev.idemkit.ports.in.Redrives;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The console's real redrives, run as jobs (issue 29 item 6): a redrive of hundreds of dead letters at the redrive rate
 * takes minutes, and neither an HTTP worker nor the request waits for it. Each job is one call of the {@link Redrives}
 * operation (its locks, rate, audit and order of operations) on a small executor of the console's own. One job per
 * queue at a time (what the operation's queue lock meant for the console's synchronous redrive): another is refused
 * naming the running one. Job ids are random UUIDs. The running jobs and the last {@value #KEPT} others are kept in
 * memory; the durable record of a redrive is its audit entry, which each job names once the redrive began. Closing
 * stops the running jobs between two dead letters (each dead letter's move is the operation's: the copy published,
 * then the dead letter removed). Thread-safe.
 */
final class RedriveJobs implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RedriveJobs.class);
    static final int KEPT = 100;
    /** How long the starting request waits for the redrive to begin (planned and audited) or to end. */
    static final Duration START_BOUND = Duration.ofSeconds(5);
    /** How long closing waits for the dead letters being moved; then the jobs are interrupted. */
    static final Duration STOP_BOUND = Duration.ofSeconds(15);

    private final Redrives redrives;
    private final ThreadPoolExecutor executor;
    /** Guarded by {@code this}: every kept job by id, oldest first, and the running one of each queue. */
    private final Map<String, Job> jobs = new LinkedHashMap<>();
    private final Map<String, Job> running = new HashMap<>();
    private boolean closed;

    /** At most one job per queue, so {@code queues} bounds the jobs at once (and the threads, at most four). */
    RedriveJobs(Redrives redrives, int queues) {
        this.redrives = Objects.requireNonNull(redrives, "redrives");
        int threads = Math.max(1, Math.min(4, queues));
        AtomicInteger n = new AtomicInteger();
        this.executor = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(Math.max(1, queues)), r -> {
                    Thread t = new Thread(r, "idemkit-redrive-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
    }

    /** What {@link #submit} did: started a job, or found one of the queue running. */
    sealed interface Submission {
        record Started(Job job) implements Submission { }

        record Busy(Job running) implements Submission { }
    }

    /**
     * Starts {@code command} as a job unless its queue has one running; returns once the redrive began (recorded in
     * the audit) or ended, or after {@link #START_BOUND}, whichever is first.
     */
    Submission submit(Redrives.Command command) throws InterruptedException {
        Job job;
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("the console is shutting down: no new redrive");
            }
            Job busy = running.get(command.queue());
            if (busy != null) {
                return new Submission.Busy(busy);
            }
            job = new Job(UUID.randomUUID().toString(), command);
            running.put(command.queue(), job);
            jobs.put(job.id, job);
            trim();
        }
        try {
            executor.execute(() -> run(job));
        } catch (RejectedExecutionException e) {
            ended(job, null, new IllegalStateException("no thread for the redrive: " + e.getMessage()));
        }
        job.begun.await(START_BOUND.toMillis(), TimeUnit.MILLISECONDS);
        return new Submission.Started(job);
    }

    /** The running job of {@code queue}, if any. */
    synchronized Optional<Job> runningOn(String queue) {
        return Optional.ofNullable(running.get(queue));
    }

    /** A kept job. */
    synchronized Optional<Job> find(String id) {
        return Optional.ofNullable(jobs.get(id));
    }

    /** Drops an ended job that never became a redrive (refused, or none of its ids found: answered at once). */
    synchronized void forget(Job job) {
        jobs.remove(job.id, job);
    }

    private void run(Job job) {
        Redrives.Outcome outcome = null;
        RuntimeException error = null;
        try {
            outcome = redrives.redrive(job.command, job);
        } catch (RuntimeException e) {
            error = e;
        } catch (Error e) {
            error = new IllegalStateException(e.toString(), e);
            throw e;
        } finally {
            ended(job, outcome, error);
        }
    }

    private void ended(Job job, Redrives.Outcome outcome, RuntimeException error) {
        job.end(outcome, error);
        synchronized (this) {
            running.remove(job.command.queue(), job);
        }
        LOG.info("redrive job={} queue={} audit={} state={} done={} of {}", job.id, job.command.queue(),
                job.auditId().isPresent() ? job.auditId().getAsLong() : "none", job.state(), job.done(), job.total());
    }

    /** Keeps the running jobs and the newest {@link #KEPT} others. Guarded by {@code this}. */
    private void trim() {
        int ended = jobs.size() - running.size();
        for (Iterator<Job> it = jobs.values().iterator(); it.hasNext() && ended > KEPT; ) {
            if (!it.next().running()) {
                it.remove();
                ended--;
            }
        }
    }

    /** Stops the running jobs between two dead letters and waits for them (bounded: then interrupts them). */
    @Override
    public void close() {
        List<Job> stopping;
        synchronized (this) {
            closed = true;
            stopping = List.copyOf(running.values());
        }
        stopping.forEach(j -> j.stop = true);
        executor.shutdown();
        try {
            if (!stopping.isEmpty()) {
                LOG.info("stopping {} redrive job(s) between two dead letters", stopping.size());
            }
            if (!executor.awaitTermination(STOP_BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
                LOG.warn("redrive jobs still running after {}: interrupting them", STOP_BOUND);
                executor.shutdownNow();
                executor.awaitTermination(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            executor.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    /** One job: its command, its progress as the redrive reports it, and how it ended. Thread-safe. */
    static final class Job implements Redrives.Progress {
        final String id;
        private final Redrives.Command command;
        private final CountDownLatch begun = new CountDownLatch(1);
        private final List<RedriveResult> results = new ArrayList<>(); // guarded by itself
        private volatile long auditId = -1;
        private volatile boolean stop;
        private volatile boolean ended;
        private volatile Redrives.Outcome outcome;
        private volatile RuntimeException error;

        private Job(String id, Redrives.Command command) {
            this.id = id;
            this.command = command;
        }

        @Override
        public void began(long audit, int ids) {
            auditId = audit;
            begun.countDown();
        }

        @Override
        public void done(RedriveResult result) {
            synchronized (results) {
                results.add(result);
            }
        }

        @Override
        public boolean stopRequested() {
            return stop;
        }

        private void end(Redrives.Outcome o, RuntimeException e) {
            outcome = o;
            error = e;
            ended = true;
            begun.countDown();
        }

        boolean running() {
            return !ended;
        }

        /** What ended it before it began: a refused command (the exception), if that is how it ended. */
        Optional<RuntimeException> error() {
            return Optional.ofNullable(error);
        }

        /** Ended finding none of its ids: nothing done, nothing recorded. */
        boolean nothingFound() {
            return ended && outcome != null && outcome.nothingFound();
        }

        OptionalLong auditId() {
            return auditId < 0 ? OptionalLong.empty() : OptionalLong.of(auditId);
        }

        String queue() {
            return command.queue();
        }

        int total() {
            return command.ids().size();
        }

        int done() {
            synchronized (results) {
                return results.size();
            }
        }

        /** running, done, or failed (stopped at a failure or on shutdown, refused, or none of its ids found). */
        String state() {
            if (!ended) {
                return "running";
            }
            return error == null && outcome.failure().isEmpty() && !outcome.nothingFound() ? "done" : "failed";
        }

        /** The job as {@code GET /ops/redrive/jobs/{id}} shows it: its results as the synchronous redrive had them. */
        ObjectNode json() {
            ObjectNode root = CanonicalJson.MAPPER.createObjectNode();
            root.put("job", id).put("queue", command.queue()).put("dry_run", false).put("state", state())
                    .put("done", done()).put("total", total());
            auditId().ifPresent(a -> root.put("audit_id", a));
            Redrives.Outcome o = outcome;
            List<RedriveResult> shown;
            synchronized (results) {
                shown = o != null ? o.results() : List.copyOf(results);
            }
            results(root, shown);
            if (error != null) {
                root.put("error", "the redrive failed: " + error.getMessage());
            } else if (o != null && o.nothingFound()) {
                root.put("error", "none of the " + total() + " ids is in the dead-letter queue of " + command.queue()
                        + " (already redriven, or never there)");
            } else if (o != null) {
                failure(root, o);
            }
            return root;
        }
    }

    /** The per-dead-letter results, as the console has always answered them. */
    static void results(ObjectNode root, List<RedriveResult> results) {
        ArrayNode items = root.putArray("results");
        for (RedriveResult r : results) {
            items.addObject().put("id", r.deadLetterId()).put("found", r.found()).put("action", r.action().name())
                    .put("age_seconds", r.age().toSeconds()).put("dedup_window_seconds", r.dedupWindow().toSeconds());
        }
    }

    /** Where a redrive stopped, if it did: why, and the ids not attempted (the same request again resumes). */
    static void failure(ObjectNode root, Redrives.Outcome outcome) {
        outcome.failure().ifPresent(failure -> {
            root.put("error", "stopped after " + outcome.results().size() + " of "
                    + (outcome.results().size() + outcome.notAttempted().size()) + ": " + failure + "; the others are"
                    + " still in the dead-letter queue, send the same request again to resume");
            ArrayNode left = root.putArray("not_attempted");
            outcome.notAttempted().forEach(left::add);
        });
    }
}
