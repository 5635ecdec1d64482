package dev.idemkit.app;

import dev.idemkit.app.consumers.AccountCredit;
import dev.idemkit.app.consumers.OrderPlaced;
import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.ports.out.OutgoingMessage;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code idemkit publish}: sends N messages of which a chosen share repeat an earlier message (same id,
 * same body), as a broker redelivery or a producer retry would; prints what a correct consumer must end with.
 */
@Command(name = "publish", mixinStandardHelpOptions = true,
        description = "Publish N messages with a share of duplicates (for load tests and demos).")
final class PublishCommand extends AppCommand {
    @Option(names = "--queue", defaultValue = "accounts.credit", description = "accounts.credit or orders.placed")
    String queue;

    @Option(names = {"-n", "--count"}, defaultValue = "100", description = "messages to send (default 100)")
    int count;

    @Option(names = "--duplicates", defaultValue = "0.3", description = "share of duplicates, 0..1 (default 0.3)")
    double duplicates;

    @Option(names = "--account", defaultValue = "acc-123", description = "account credited (accounts.credit)")
    String account;

    @Option(names = "--amount", defaultValue = "1.00", description = "amount per credit (default 1.00)")
    BigDecimal amount;

    @Option(names = "--seed", defaultValue = "1", description = "random seed for choosing duplicates")
    long seed;

    @Override
    public Integer call() {
        if (count < 1 || duplicates < 0 || duplicates >= 1) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                    "--count must be positive and --duplicates in [0, 1)");
        }
        if (!queue.equals(AccountCredit.QUEUE) && !queue.equals(OrderPlaced.QUEUE)) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                    "--queue must be " + AccountCredit.QUEUE + " or " + OrderPlaced.QUEUE);
        }
        List<OutgoingMessage> plan = plan(UUID.randomUUID().toString().substring(0, 8));
        long unique = plan.stream().map(OutgoingMessage::id).distinct().count();
        try (Assembly assembly = assemble(settings())) {
            for (OutgoingMessage m : plan) {
                assembly.tracing().publishing(assembly.transport()).publish(assembly.transportBinding().queue(queue), m);
            }
        }
        out().printf("published %d messages to %s: %d unique ids, %d duplicates%n", plan.size(), queue, unique,
                plan.size() - unique);
        if (queue.equals(AccountCredit.QUEUE)) {
            out().printf("a correct consumer credits %s by %s in total%n", account,
                    amount.multiply(BigDecimal.valueOf(unique)));
        } else {
            out().printf("a correct consumer writes %d inventory_reservations rows%n", unique);
        }
        return 0;
    }

    /** The messages in order; each duplicate repeats a random earlier message exactly. */
    List<OutgoingMessage> plan(String run) {
        SplittableRandom random = new SplittableRandom(seed);
        List<OutgoingMessage> sent = new ArrayList<>();
        int fresh = 0;
        for (int i = 0; i < count; i++) {
            if (!sent.isEmpty() && random.nextDouble() < duplicates) {
                sent.add(sent.get(random.nextInt(sent.size())));
                continue;
            }
            String id = "pub-" + run + "-" + fresh++;
            byte[] body = queue.equals(AccountCredit.QUEUE) ? new AccountCredit(account, amount).toJson()
                    : new OrderPlaced("ord-" + id, "cust-" + (fresh % 97), List.of("sku-" + (fresh % 13))).toJson();
            sent.add(OutgoingMessage.of(id, body));
        }
        return sent;
    }
}
