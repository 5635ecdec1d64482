package dev.idemkit.benchmarks.spring;

import java.util.Arrays;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * One benchmarked Spring service in a JVM of its own, for {@link SpringPeerKills}: arguments are the variant, then its
 * Spring properties ({@code key=value}, as {@link SpringListenerBenchmark#properties} makes them). Starts the service,
 * starts its container, prints {@code READY}, and runs until it is killed (SIGTERM closes the context).
 */
public final class ServiceChild {
    private ServiceChild() {}

    public static void main(String[] args) {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(SpringListenerBenchmark.config(args[0]))
                .web(WebApplicationType.NONE).properties(Arrays.copyOfRange(args, 1, args.length)).run();
        context.getBean(RabbitAdmin.class).initialize();
        SpringListenerBenchmark.container(context).start();
        System.out.println("READY");
        System.out.flush();
    }
}
