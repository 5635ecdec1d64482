package dev.idemkit.app;

import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.app.wiring.ConsumerKind;
import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.deadletter.DeadLetter;
import dev.idemkit.domain.deadletter.RedriveRequest;
import dev.idemkit.ports.in.DeadLetters;
import dev.idemkit.ports.out.DeadLetterEntry;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
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
                    out().printf("%s  message_id=%s  attempts=%d  dead-lettered %s  reason: %s%n", e.id(),
                            d.original().rawId(), d.attempts().size(), d.deadLetteredAt(), d.reason());
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
                    out().println("no dead letter " + id + " in the DLQ of " + queue);
                    return Idemkit.EXIT_FAILED;
                }
                print(out(), entry.get(), body);
                assembly.transportBinding().brokerTrail(queue, id).forEach(l -> out().println("  " + l));
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

        @Override
        public Integer call() {
            Approval approval;
            try {
                approval = new Approval(approvedBy, reason, java.time.Instant.now());
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
            try (Assembly assembly = assemble(settings())) {
                var results = deadLetters(assembly).redrive(queue, new RedriveRequest(ids, approval));
                boolean allFound = true;
                for (var r : results) {
                    out().println(r.deadLetterId() + ": " + (r.found() ? r.action() : "NOT FOUND"));
                    allFound &= r.found();
                }
                return allFound ? 0 : Idemkit.EXIT_FAILED;
            }
        }
    }

    static void print(PrintWriter out, DeadLetterEntry e, boolean withBody) {
        DeadLetter d = e.deadLetter();
        out.println("dead letter " + e.id());
        out.println("  message_id:      " + d.original().rawId());
        out.println("  origin queue:    " + d.originQueue());
        out.println("  reason:          " + d.reason());
        out.println("  dead-lettered:   " + d.deadLetteredAt());
        for (AttemptRecord a : d.attempts()) {
            out.println("  attempt " + a.number() + " at " + a.at() + ": " + a.error());
        }
        out.println("  body:            " + d.original().size() + " bytes"
                + (withBody ? "\n" + new String(d.original().body(), StandardCharsets.UTF_8) : ""));
    }
}
