package dev.idemkit.app;

import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.domain.Printable;
import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.out.OutboxEntry;
import dev.idemkit.ports.out.OutboxMaintenance;
import dev.idemkit.ports.out.OutboxStore;
import dev.idemkit.ports.out.ParkedOutbox;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code idemkit outbox list | show ID | redrive ID... | discard ID... --approved-by WHO --reason WHY}. */
@Command(name = "outbox", mixinStandardHelpOptions = true, description = "Inspect the outbox and redrive parked messages.",
        subcommands = {OutboxCommand.ListRows.class, OutboxCommand.Show.class, OutboxCommand.Redrive.class,
                OutboxCommand.Discard.class})
final class OutboxCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), "choose list, show, redrive or discard");
    }

    /** The store's outbox, or exit 2 on a store that has none. */
    static OutboxStore outbox(Assembly assembly) {
        return assembly.store().outbox().orElseThrow(() -> new dev.idemkit.app.config.ConfigException("store",
                "the " + assembly.settings().store().kind().name().toLowerCase() + " store has no outbox (PostgreSQL has)"));
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = "List parked outbox messages (or, with --unsent, every message not yet sent), oldest first.")
    static final class ListRows extends AppCommand {
        @Option(names = "--max", defaultValue = "50", description = "at most this many (default 50)")
        int max;

        @Option(names = "--unsent", description = "pending messages too, not only parked ones")
        boolean unsent;

        @Override
        public Integer call() {
            try (Assembly assembly = assemble(settings())) {
                OutboxStore outbox = outbox(assembly);
                OutboxMaintenance.Stats stats = outbox.stats(Instant.now());
                out().println("outbox: " + stats.pending() + " pending" + stats.oldestPendingAge()
                        .map(a -> " (oldest " + a + ")").orElse("") + ", " + stats.parked() + " parked");
                List<OutboxEntry> rows = unsent ? outbox.unsent(max) : outbox.parked(max);
                for (OutboxEntry e : rows) {
                    out().printf("%s  %s  destination=%s  key=%s  appended %s  failures=%d%s%n", e.row().id(), e.state(),
                            Printable.id(e.row().message().destination()), Printable.id(e.row().message().orderingKey()),
                            e.row().appendedAt(), e.row().failures().size(),
                            e.parkReason().map(r -> "  reason: " + Printable.text(r, 300)).orElse(""));
                }
                return 0;
            }
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = "Show one outbox message with its attempts.")
    static final class Show extends AppCommand {
        @Parameters(index = "0", paramLabel = "ID")
        String id;

        @Option(names = "--body", description = "also print the body (may hold personal data)")
        boolean body;

        @Override
        public Integer call() {
            try (Assembly assembly = assemble(settings())) {
                Optional<OutboxEntry> entry = outbox(assembly).find(id);
                if (entry.isEmpty()) {
                    out().println("no outbox message " + Printable.id(id));
                    return Idemkit.EXIT_FAILED;
                }
                print(out(), entry.get(), body);
                return 0;
            }
        }
    }

    /** Shared: the ids and the approval every change of a parked message needs. */
    abstract static class Approved extends AppCommand {
        @Parameters(index = "0..*", arity = "1..*", paramLabel = "ID")
        List<String> ids;

        @Option(names = "--approved-by", required = true, paramLabel = "WHO")
        String approvedBy;

        @Option(names = "--reason", required = true, paramLabel = "WHY")
        String reason;

        /** Applies {@code change} to each id with the approval; exit 0 only when every one was parked. */
        Integer each(String done, java.util.function.BiPredicate<ParkedOutbox, String> change) {
            Approval approval;
            try {
                approval = new Approval(approvedBy, reason, Instant.now());
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
            this.approval = approval;
            try (Assembly assembly = assemble(settings())) {
                ParkedOutbox outbox = outbox(assembly);
                boolean all = true;
                for (String id : ids) {
                    boolean changed = change.test(outbox, id);
                    out().println(Printable.id(id) + ": " + (changed ? done + " (approved by " + Printable.id(approvedBy)
                            + ")" : "NOT PARKED (no such message, or already sent or pending)"));
                    all &= changed;
                }
                return all ? 0 : Idemkit.EXIT_FAILED;
            }
        }

        Approval approval;
    }

    @Command(name = "redrive", mixinStandardHelpOptions = true,
            description = "Put parked outbox messages back in line, with an approval. Never automatic.")
    static final class Redrive extends Approved {
        @Override
        public Integer call() {
            return each("REDRIVEN, due now", (outbox, id) -> outbox.redrive(id, approval));
        }
    }

    @Command(name = "discard", mixinStandardHelpOptions = true,
            description = "Give up on parked outbox messages for good, with an approval: never published; the"
                    + " messages behind them in their keys go out.")
    static final class Discard extends Approved {
        @Override
        public Integer call() {
            return each("DISCARDED, never published", (outbox, id) -> outbox.discard(id, approval));
        }
    }

    static void print(PrintWriter out, OutboxEntry e, boolean withBody) {
        out.println("outbox message " + e.row().id());
        out.println("  state:         " + e.state());
        out.println("  destination:   " + Printable.id(e.row().message().destination()));
        out.println("  ordering key:  " + Printable.id(e.row().message().orderingKey()));
        out.println("  appended:      " + e.row().appendedAt());
        e.sentAt().ifPresent(t -> out.println("  sent:          " + t));
        e.nextAttemptAt().ifPresent(t -> out.println("  next attempt:  " + t));
        e.parkedAt().ifPresent(t -> out.println("  parked:        " + t + " (the key's later messages wait)"));
        e.parkReason().ifPresent(r -> out.println("  reason:        " + Printable.text(r, 1000)));
        e.redrive().ifPresent(r -> out.println("  redriven:      " + Printable.text(r, 1000)));
        for (AttemptRecord a : e.row().failures()) {
            out.println("  failure " + a.number() + " at " + a.at() + ": " + Printable.text(a.error(), 500));
        }
        e.row().headers().forEach((k, v) -> out.println("  header " + Printable.id(k) + ": " + Printable.text(v, 300)));
        byte[] body = e.row().message().body();
        out.println("  body:          " + body.length + " bytes"
                + (withBody ? "\n" + Printable.text(new String(body, StandardCharsets.UTF_8), Integer.MAX_VALUE) : ""));
    }
}
