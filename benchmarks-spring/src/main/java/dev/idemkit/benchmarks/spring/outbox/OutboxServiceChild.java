package dev.idemkit.benchmarks.spring.outbox;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * One outbox service in a JVM of its own, for {@link OutboxPeersBenchmark}'s SIGKILL comparison. Arguments: the service
 * ({@code idemkit} or {@code modulith}), the broker ({@code kafka} or {@code rabbit}), the run's id tag, the first and
 * the end index of the credits to commit, then the service's Spring properties ({@code key=value}). Starts the
 * service, prints {@code READY}, then commits credit {@code <tag>-<i>} to account {@code k<i>}, each with its event,
 * for every index from the first to the end, from 2 threads, and runs until it is killed (SIGTERM closes the context,
 * which lets the relay finish).
 */
public final class OutboxServiceChild {
    private OutboxServiceChild() {}

    public static void main(String[] args) throws Exception {
        String tag = args[2];
        long from = Long.parseLong(args[3]);
        long to = Long.parseLong(args[4]);
        ConfigurableApplicationContext context = new SpringApplicationBuilder(
                OutboxPeersBenchmark.config(args[0], args[1])).web(WebApplicationType.NONE)
                .properties(Arrays.copyOfRange(args, 5, args.length)).run();
        OutboxServices.Credits credits = context.getBean(OutboxServices.Credits.class);
        System.out.println("READY");
        System.out.flush();
        AtomicLong next = new AtomicLong(from);
        for (int t = 0; t < 2; t++) {
            new Thread(() -> {
                for (long i = next.getAndIncrement(); i < to; i = next.getAndIncrement()) {
                    credits.credit(tag + "-" + i, "k" + i);
                }
            }, "outbox-child-writer-" + t).start();
        }
    }
}
