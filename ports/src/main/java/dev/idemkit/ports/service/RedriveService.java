package dev.idemkit.ports.service;

import dev.idemkit.domain.Printable;
import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.domain.deadletter.RedriveAction;
import dev.idemkit.domain.deadletter.RedriveRequest;
import dev.idemkit.ports.in.DeadLetters;
import dev.idemkit.ports.in.DeadLetters.RedriveResult;
import dev.idemkit.ports.in.Redrives;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.ConsumerEvents;
import dev.idemkit.ports.out.DeadLetterEntry;
import dev.idemkit.ports.out.RedriveAudit;
import dev.idemkit.ports.out.RedriveEvents;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The redrive operation ({@link Redrives}): what the console and {@code idemkit dlq redrive} both call.
 *
 * <ul>
 *   <li>One redrive or dry run per queue at a time: two requests for the same dead letter never both find it before
 *       either moved it, and the audit of each is whole.</li>
 *   <li>One dead letter at a time, at most {@code perSecond} across every queue (a slot is reserved under one lock,
 *       then waited for; no catching up after a stall).</li>
 *   <li>Audited: recorded when it starts (before anything moves), each dead letter's result as it is done, then how it
 *       ended; a redrive cut short by a crash stays on record with what it moved.</li>
 *   <li>Reported as it goes to the caller's {@link Redrives.Progress}, which may also stop it between two dead
 *       letters (recorded as a failure: what was left was not attempted).</li>
 *   <li>Stopped at the first failure (a broker in trouble): what moved is reported and audited, the rest stays in the
 *       dead-letter queue, and the same command again resumes (what moved is no longer found, what the inbox processed
 *       meanwhile is skipped).</li>
 *   <li>Each dead letter's redrive is decided by {@link DeadLetters#redrive} (approval, inbox, dedup window, the second
 *       approval past it) and observed by the {@link RedriveEvents} hook.</li>
 * </ul>
 * Thread-safe.
 */
public final class RedriveService implements Redrives {
    private static final System.Logger LOG = System.getLogger(RedriveService.class.getName());

    private final Map<String, DeadLetters> queues;
    private final RedriveAudit audit;
    private final Clock clock;
    private final RedriveEvents events;
    private final long spacingNanos;
    private final LongSupplier nanoTime;
    private final Sleep sleep;
    private final Map<String, Object> locks = new ConcurrentHashMap<>();
    private final Object rate = new Object();
    /** When the next dead letter may move (guarded by {@link #rate}). */
    private long nextSlot;

    /** How the rate waits (a test's clock advances instead). */
    @FunctionalInterface
    interface Sleep {
        void nanos(long n) throws InterruptedException;
    }

    /**
     * @param queues the work queues served, each with the dead-letter operations of its consumer (whose inbox a
     *     redrive consults)
     * @param perSecond dead letters moved per second at most, across all queues
     */
    public RedriveService(Map<String, DeadLetters> queues, RedriveAudit audit, Clock clock, double perSecond,
            RedriveEvents events) {
        this(queues, audit, clock, perSecond, events, System::nanoTime,
                n -> Thread.sleep(n / 1_000_000, (int) (n % 1_000_000)));
    }

    RedriveService(Map<String, DeadLetters> queues, RedriveAudit audit, Clock clock, double perSecond,
            RedriveEvents events, LongSupplier nanoTime, Sleep sleep) {
        this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
        this.sleep = Objects.requireNonNull(sleep, "sleep");
        this.nextSlot = nanoTime.getAsLong();
        this.queues = Map.copyOf(queues);
        this.audit = Objects.requireNonNull(audit, "audit");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.events = Objects.requireNonNull(events, "events");
        if (!(perSecond > 0)) {
            throw new IllegalArgumentException("redrives per second must be positive, got " + perSecond);
        }
        this.spacingNanos = (long) (1_000_000_000L / perSecond);
    }

    @Override
    public Set<String> queues() {
        return queues.keySet();
    }

    @Override
    public List<RedriveAudit.Entry> audit(int max) {
        return audit.entries(max);
    }

    @Override
    public Outcome redrive(Command command, Progress progress) {
        String queue = command.queue();
        DeadLetters dlq = queues.get(queue);
        if (dlq == null) {
            throw new NoSuchElementException("no queue " + Printable.id(queue));
        }
        Approval approval = command.approval();
        // the approvals' rules on the approvers as given (two different people past the window), before anything else
        new RedriveRequest(command.ids(), approval, command.pastWindow());
        // recorded on every republished message: who approved it, and who asked for it when that is someone else
        Approval recorded = command.dryRun() || approval.approvedBy().equals(command.operator()) ? approval
                : new Approval(approval.approvedBy() + " (operator " + command.operator() + ")", approval.reason(),
                        approval.at());
        RedriveRequest request = new RedriveRequest(command.ids(), recorded, command.pastWindow());
        // the audit names the second approver too (the past-window approval is part of what was decided)
        String approvers = approval.approvedBy() + command.pastWindow().map(p -> "; past the dedup window: "
                + p.approvedBy() + " (" + p.reason() + ")").orElse("");
        synchronized (locks.computeIfAbsent(queue, q -> new Object())) {
            List<RedriveResult> plan = dlq.plan(queue, request);
            if (plan.stream().noneMatch(RedriveResult::found)) {
                return new Outcome(OptionalLong.empty(), plan, Optional.empty(), List.of());
            }
            long entry = audit.begin(clock.now(), command.operator(), approvers, approval.reason(), queue,
                    command.dryRun(), command.ids().size());
            progress.began(entry, command.ids().size());
            List<RedriveResult> results = new ArrayList<>();
            String failure = null;
            if (command.dryRun()) {
                for (RedriveResult r : plan) {
                    results.add(r);
                    audit.result(entry, auditResult(r));
                    progress.done(r);
                }
            } else {
                try {
                    for (String id : command.ids()) {
                        if (progress.stopRequested()) {
                            throw new IllegalStateException("stopped on request");
                        }
                        awaitSlot();
                        for (RedriveResult r : redriveOne(dlq, queue, id, request)) {
                            results.add(r);
                            audit.result(entry, auditResult(r));
                            progress.done(r);
                        }
                    }
                } catch (RuntimeException e) {
                    failure = e.toString();
                    LOG.log(Level.ERROR, "redrive queue={0} stopped after {1} of {2}: {3}", queue, results.size(),
                            command.ids().size(), Printable.text(failure, 300));
                }
            }
            audit.finish(entry, failure);
            LOG.log(Level.INFO, "redrive queue={0} operator={1} approver={2} dry_run={3} ids={4} republished={5}", queue,
                    Printable.id(command.operator()), Printable.id(approval.approvedBy()), command.dryRun(),
                    command.ids().size(), results.stream().filter(r -> r.found()
                            && r.action() == RedriveAction.REPUBLISH).count());
            List<String> notAttempted = command.ids().subList(Math.min(results.size(), command.ids().size()),
                    command.ids().size());
            return new Outcome(OptionalLong.of(entry), results, Optional.ofNullable(failure),
                    failure == null ? List.of() : notAttempted);
        }
    }

    /** One dead letter, under its hook's observation (none when it is not found: reported as such). */
    private List<RedriveResult> redriveOne(DeadLetters dlq, String queue, String id, RedriveRequest request) {
        RedriveRequest one = new RedriveRequest(List.of(id), request.approval(), request.pastWindow());
        Optional<DeadLetterEntry> entry = dlq.show(queue, id);
        if (entry.isEmpty()) {
            return dlq.redrive(queue, one);
        }
        RedriveEvents.Observation observation = events.started(queue, entry.get(), request.approval());
        List<RedriveResult> done = List.of();
        try (ConsumerEvents.Scope ignored = observation.enter()) {
            done = dlq.redrive(queue, one);
        } finally {
            observation.finished(done.isEmpty() ? "failed" : done.get(0).action().name());
        }
        return done;
    }

    /** Waits for this dead letter's slot of the rate, shared by every queue. */
    private void awaitSlot() {
        long wait;
        synchronized (rate) {
            long now = nanoTime.getAsLong();
            long slot = Math.max(nextSlot, now);
            nextSlot = slot + spacingNanos;
            wait = slot - now;
        }
        if (wait > 0) {
            try {
                sleep.nanos(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted"); // what is left stays in the dead-letter queue
            }
        }
    }

    private static RedriveAudit.Result auditResult(RedriveResult r) {
        return new RedriveAudit.Result(r.deadLetterId(), r.found(), r.action().name());
    }
}
