package dev.idemkit.ports.service;

import dev.idemkit.domain.Message;
import dev.idemkit.domain.MessageId;
import dev.idemkit.domain.Printable;
import dev.idemkit.domain.deadletter.AlertPolicy;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.deadletter.DeadLetter;
import dev.idemkit.domain.deadletter.FailureGroup;
import dev.idemkit.domain.deadletter.RedriveAction;
import dev.idemkit.domain.deadletter.RedriveRequest;
import dev.idemkit.domain.deadletter.RedriveWindow;
import dev.idemkit.ports.in.DeadLetters;
import dev.idemkit.ports.out.Alert;
import dev.idemkit.ports.out.Alerts;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.DeadLetterEntry;
import dev.idemkit.ports.out.DeadLetterQueue;
import java.lang.System.Logger.Level;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Dead-letter operations over a {@link DeadLetterQueue}: inspection that logs each dead letter with
 * enough context to diagnose it (origin queue, every attempt's timestamp and error, the reason),
 * alerting past the threshold, and redrive that needs an approval, skips what the inbox already
 * processed, and refuses a dead letter older than the dedup window (its key may have been purged)
 * unless a second person approved that too. Never automatic.
 */
public final class DeadLetterService implements DeadLetters {
    private static final System.Logger LOG = System.getLogger(DeadLetterService.class.getName());

    private final DeadLetterQueue dlq;
    private final Alerts alerts;
    private final AlertPolicy policy;
    private final Clock clock;
    private final ProcessedKeys processed;
    private final RedriveWindow window;

    /**
     * @param window the dedup window: the inbox's retention, so that a dead letter is redriven on one approval
     *     only while the inbox still holds the keys of what was processed around it
     */
    public DeadLetterService(DeadLetterQueue dlq, Alerts alerts, AlertPolicy policy, Clock clock,
            ProcessedKeys processed, RedriveWindow window) {
        this.dlq = Objects.requireNonNull(dlq, "dlq");
        this.alerts = Objects.requireNonNull(alerts, "alerts");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.processed = Objects.requireNonNull(processed, "processed");
        this.window = Objects.requireNonNull(window, "window");
    }

    @Override
    public long depth(String queue) {
        return dlq.depth(queue);
    }

    @Override
    public List<DeadLetterEntry> inspect(String queue, int max) {
        List<DeadLetterEntry> entries = dlq.peek(queue, max);
        entries.forEach(DeadLetterService::logEntry);
        return entries;
    }

    @Override
    public Optional<DeadLetterEntry> show(String queue, String deadLetterId) {
        return dlq.find(queue, deadLetterId);
    }

    /**
     * Reads one more than {@code max} to know whether {@code max} were all; unlike {@link #inspect}, logs nothing (an
     * overview read on every page load would flood the log with the same dead letters).
     */
    @Override
    public FailureGroups groups(String queue, int max) {
        if (max < 1) {
            throw new IllegalArgumentException("groups of at least 1 dead letter, got max " + max);
        }
        List<DeadLetterEntry> read = dlq.peek(queue, max + 1);
        List<DeadLetterEntry> scanned = read.size() > max ? read.subList(0, max) : read;
        return new FailureGroups(FailureGroup.of(scanned.stream()
                .map(e -> new FailureGroup.Member(e.id(), e.deadLetter())).toList()), scanned.size(),
                read.size() <= max);
    }

    @Override
    public Optional<java.time.Duration> oldestAge(String queue) {
        return dlq.peek(queue, 1).stream().findFirst().map(e -> RedriveWindow.age(e.deadLetter(), clock.now()));
    }

    @Override
    public boolean checkDepth(String queue) {
        long depth = dlq.depth(queue);
        if (!policy.shouldAlert(depth)) {
            return false;
        }
        alerts.raise(new Alert(queue, depth, policy.threshold(), "dead-letter queue of " + queue + " holds " + depth
                + " messages (threshold " + policy.threshold() + ")", clock.now()));
        return true;
    }

    @Override
    public List<RedriveResult> redrive(String queue, RedriveRequest request) {
        return decide(queue, request, true);
    }

    @Override
    public List<RedriveResult> plan(String queue, RedriveRequest request) {
        return decide(queue, request, false);
    }

    private List<RedriveResult> decide(String queue, RedriveRequest request, boolean move) {
        List<RedriveResult> results = new ArrayList<>();
        for (String id : request.deadLetterIds()) {
            Optional<DeadLetterEntry> entry = dlq.find(queue, id);
            if (entry.isEmpty()) {
                results.add(new RedriveResult(id, RedriveAction.SKIP_NO_ID, false, java.time.Duration.ZERO,
                        window.dedupWindow()));
                continue;
            }
            DeadLetter dead = entry.get().deadLetter();
            Optional<MessageId> messageId = dead.original().id();
            Instant now = clock.now();
            RedriveAction action = RedriveAction.decide(messageId.isPresent(),
                    messageId.isPresent() && processed.isProcessed(messageId.get()), window.admits(dead, now),
                    request.pastWindow().isPresent());
            if (!move) {
                results.add(new RedriveResult(id, action, true, RedriveWindow.age(dead, now), window.dedupWindow()));
                continue;
            }
            boolean moved = action == RedriveAction.REPUBLISH && dlq.redrive(queue, id, request.approval());
            String age = RedriveWindow.age(dead, now) + " (dedup window " + window.dedupWindow() + ")";
            LOG.log(action == RedriveAction.SKIP_PAST_WINDOW ? Level.WARNING : Level.INFO,
                    "redrive dead_letter={0} queue={1} action={2} moved={3} age={4} approved_by={5} why=\"{6}\"{7}",
                    Printable.id(id), queue, action, moved, age, Printable.id(request.approval().approvedBy()),
                    Printable.text(request.approval().reason(), 200), request.pastWindow()
                            .map(a -> " past_window_approved_by=" + Printable.id(a.approvedBy())).orElse(""));
            results.add(new RedriveResult(id, action, action != RedriveAction.REPUBLISH || moved,
                    RedriveWindow.age(dead, now), window.dedupWindow()));
        }
        return results;
    }

    private static void logEntry(DeadLetterEntry entry) {
        DeadLetter dl = entry.deadLetter();
        Message m = dl.original();
        StringBuilder attempts = new StringBuilder();
        for (AttemptRecord a : dl.attempts()) {
            attempts.append(" attempt").append(a.number()).append('=').append(a.at());
        }
        LOG.log(Level.WARNING, "dead_letter={0} origin_queue={1} message_id={2} reason=\"{3}\" attempts={4}{5}"
                + " dead_lettered_at={6}", Printable.id(entry.id()), dl.originQueue(), Printable.id(m.rawId()),
                Printable.text(dl.reason(), 500), dl.attempts().size(), attempts, dl.deadLetteredAt());
    }
}
