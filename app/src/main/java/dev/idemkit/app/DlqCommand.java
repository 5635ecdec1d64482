package dev.idemkit.app;

import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.app.wiring.ConsumerKind;
import dev.idemkit.domain.Printable;
import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.deadletter.DeadLetter;
import dev.idemkit.domain.deadletter.RedriveAction;
import dev.idemkit.domain.deadletter.RedriveRequest;
import dev.idemkit.ports.in.DeadLetters;
import dev.idemkit.ports.in.Redrives;
import dev.idemkit.ports.out.DeadLetterEntry;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code idemkit dlq list | show ID | redrive ID... --approved-by WHO --reason WHY}. */
@Command(name = "dlq", mixinStandardHelpOptions = true, description = "Inspect and redrive dead letters.",
        subcommands = {DlqCommand.ListDeadLetters.class, DlqCommand.Show.class, DlqCommand.Redrive.class})
final class DlqCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), "choose list, show or redrive");
    }

    /** Shared: which queue's DLQ. */
    abstract static class DlqSubcommand extends AppCommand {
        @Option(names = "--queue", defaultValue = "orders.placed",
                description = "the work queue whose dead letters to use (default orders.placed)")
        String queue;

        DeadLetters deadLetters(Assembly assembly) {
            String logical = queue;
            queue = assembly.transportBinding().queue(logical);
            String consumer = Arrays.stream(ConsumerKind.values()).filter(k -> k.queue().equals(logical))
                    .map(ConsumerKind::consumerName).findFirst().orElse(logical);
            return assembly.deadLetters(consumer, alert -> out().println("ALERT " + alert.summary()));
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "List dead letters without consuming them.")
    static final class ListDeadLetters extends DlqSubcommand {
        @Option(names = "--max", defaultValue = "50", description = "at most this many (default 50)")
        int max;

        @Override
        public Integer call() {
            try (Assembly assembly = assemble(settings())) {
                DeadLetters dlq = deadLetters(assembly);
                List<DeadLetterEntry> entries = dlq.inspect(queue, max);
                out().println("dead letters of " + queue + ": " + dlq.depth(queue));
                for (DeadLetterEntry e : entries) {
                    DeadLetter d = e.deadLetter();
                    out().printf("%s  message_id=%s  attempts=%d  dead-lettered %s  reason: %s%n", Printable.id(e.id()),
                            Printable.id(d.original().rawId()), d.attempts().size(), d.deadLetteredAt(),
                            Printable.text(d.reason(), 300));
                }
                return 0;
            }
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = "Show one dead letter with its attempts.")
    static final class Show extends DlqSubcommand {
        @Parameters(index = "0", paramLabel = "ID")
        String id;

        @Option(names = "--body", description = "also print the body (may hold personal data)")
        boolean body;

        @Override
        public Integer call() {
            try (Assembly assembly = assemble(settings())) {
                var entry = deadLetters(assembly).show(queue, id);
                if (entry.isEmpty()) {
                    out().println("no dead letter " + Printable.id(id) + " in the DLQ of " + queue);
                    return Idemkit.EXIT_FAILED;
                }
                print(out(), entry.get(), body);
                assembly.transportBinding().brokerTrail(queue, id)
                        .forEach(l -> out().println("  " + Printable.text(l, 500)));
                return 0;
            }
        }
    }

    @Command(name = "redrive", mixinStandardHelpOptions = true,
            description = "Move dead letters back to their origin queue, with an approval. Never automatic.")
    static final class Redrive extends DlqSubcommand {
        @Parameters(index = "0..*", arity = "1..*", paramLabel = "ID")
        List<String> ids;

        @Option(names = "--approved-by", required = true, paramLabel = "WHO")
        String approvedBy;

        @Option(names = "--reason", required = true, paramLabel = "WHY")
        String reason;

        @Option(names = "--past-window-approved-by", paramLabel = "WHO",
                description = "a second approver, not the first, who also lets through dead letters older than"
                        + " dlq.retention: their keys may have been purged, so an effect that already ran could run"
                        + " again")
        String pastWindowApprovedBy;

        @Option(names = "--past-window-reason", paramLabel = "WHY",
                description = "why redriving past the dedup window is safe (with --past-window-approved-by)")
        String pastWindowReason;

        @Option(names = "--dry-run", description = "say what the redrive would do with each dead letter, move nothing")
        boolean dryRun;

        @Option(names = "--redrive-rate", defaultValue = "50",
                description = "dead letters moved per second at most (default 50)")
        double perSecond;

        @Override
        public Integer call() {
            Redrives.Command command;
            try {
                if (!(perSecond > 0) || perSecond > 10_000) {
                    throw new IllegalArgumentException("--redrive-rate must be in (0, 10000]");
                }
                java.time.Instant now = java.time.Instant.now();
                Optional<Approval> pastWindow = Optional.empty();
                if (pastWindowApprovedBy != null || pastWindowReason != null) {
                    pastWindow = Optional.of(new Approval(pastWindowApprovedBy, pastWindowReason, now));
                }
                Approval approval = new Approval(approvedBy, reason, now);
                new RedriveRequest(ids, approval, pastWindow); // the approvals' rules, checked before anything starts
                command = new Redrives.Command(queue, ids, operator(), approval, pastWindow, dryRun);
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
            try (Assembly assembly = assemble(settings())) {
                DeadLetters deadLetters = deadLetters(assembly);
                // the console's operation: audited in the store, at a rate, traced, stopped at the first failure
                Redrives redrives = assembly.redrives(java.util.Map.of(queue, deadLetters), perSecond);
                Redrives.Outcome outcome = redrives.redrive(new Redrives.Command(queue, command.ids(),
                        command.operator(), command.approval(), command.pastWindow(), command.dryRun()));
                boolean allDone = true;
                for (var r : outcome.results()) {
                    out().println(Printable.id(r.deadLetterId()) + ": " + (dryRun && r.found() ? "would " : "")
                            + describe(r));
                    allDone &= r.found() && r.action() != RedriveAction.SKIP_PAST_WINDOW;
                }
                outcome.auditId().ifPresent(id -> out().println("audit entry " + id));
                if (outcome.failure().isPresent()) {
                    out().println("STOPPED: " + Printable.text(outcome.failure().get(), 500) + "; not attempted: "
                            + outcome.notAttempted().stream().map(Printable::id).toList()
                            + " (still in the dead-letter queue: run the same command again to resume)");
                    return Idemkit.EXIT_FAILED;
                }
                return allDone ? 0 : Idemkit.EXIT_FAILED;
            }
        }

        /** Who runs the command, as the audit records the operator. */
        private static String operator() {
            return "cli:" + System.getProperty("user.name", "unknown");
        }

        private static String describe(DeadLetters.RedriveResult r) {
            if (!r.found()) {
                return "NOT FOUND";
            }
            if (r.action() == RedriveAction.SKIP_PAST_WINDOW) {
                return r.action() + ": it is " + r.age() + " old, older than the " + r.dedupWindow() + " up to which"
                        + " a dead letter is redriven on one approval (dlq.retention, kept within the dedup window"
                        + " inbox.retention): its key may have been purged, so an effect that already ran could run"
                        + " again; redrive it only with a second approval (--past-window-approved-by WHO"
                        + " --past-window-reason WHY)";
            }
            return r.action().toString();
        }
    }

    /** Everything printed here came from the wire: control characters never reach the operator's terminal. */
    static void print(PrintWriter out, DeadLetterEntry e, boolean withBody) {
        DeadLetter d = e.deadLetter();
        out.println("dead letter " + Printable.id(e.id()));
        out.println("  message_id:      " + Printable.id(d.original().rawId()));
        out.println("  origin queue:    " + Printable.id(d.originQueue()));
        out.println("  reason:          " + Printable.text(d.reason(), 1000));
        out.println("  dead-lettered:   " + d.deadLetteredAt());
        for (AttemptRecord a : d.attempts()) {
            out.println("  attempt " + a.number() + " at " + a.at() + ": " + Printable.text(a.error(), 500));
        }
        out.println("  body:            " + d.original().size() + " bytes"
                + (withBody ? "\n" + Printable.text(new String(d.original().body(), StandardCharsets.UTF_8),
                        Integer.MAX_VALUE) : ""));
    }
}
