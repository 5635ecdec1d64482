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
            publishAll(assembly.tracing().publishing(assembly.transport()), assembly.transportBinding().queue(queue), plan);
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

    /** Publishes waiting for one confirm at a time at most this many (the transport bounds it too). */
    static final int IN_FLIGHT = 256;

    /**
     * Pipelined: up to {@link #IN_FLIGHT} publishes wait for their confirms at once; returns when every one was
     * confirmed. Once a publish fails, no more are written (at most one already under way), and the first failure is
     * thrown when none is in flight any more, as itself (not wrapped). A failed publish's outcome may be unknown (a
     * timeout), and up to {@code IN_FLIGHT - 1} later messages may have landed: the totals printed are for a whole run,
     * and a rerun publishes a new plan (new ids).
     */
    static void publishAll(dev.idemkit.ports.out.MessageTransport transport, String queue, List<OutgoingMessage> plan) {
        java.util.concurrent.Semaphore slots = new java.util.concurrent.Semaphore(IN_FLIGHT);
        java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
        for (OutgoingMessage m : plan) {
            slots.acquireUninterruptibly();
            if (failure.get() != null) {
                slots.release();
                break; // the broker refuses: stop writing
            }
            java.util.concurrent.CompletableFuture<Void> confirm;
            try {
                confirm = transport.publishAsync(queue, m);
            } catch (RuntimeException e) {
                confirm = java.util.concurrent.CompletableFuture.failedFuture(e);
            }
            confirm.whenComplete((ok, e) -> {
                if (e != null) {
                    failure.compareAndSet(null, e instanceof java.util.concurrent.CompletionException
                            && e.getCause() != null ? e.getCause() : e);
                }
                slots.release();
            });
        }
        slots.acquireUninterruptibly(IN_FLIGHT); // every publish answered
        Throwable e = failure.get();
        if (e instanceof RuntimeException r) {
            throw r;
        }
        if (e != null) {
            throw new IllegalStateException("a publish to " + queue + " failed", e);
        }
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
