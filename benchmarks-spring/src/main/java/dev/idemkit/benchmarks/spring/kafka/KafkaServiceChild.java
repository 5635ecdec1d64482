package dev.idemkit.benchmarks.spring.kafka;

import java.util.Arrays;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * One Kafka listener service in a JVM of its own, for {@link SpringKafkaPeerKills}: arguments are the variant, then
 * its Spring properties ({@code key=value}, as {@link SpringKafkaListenerBenchmark#properties} makes them). Starts the
 * service and every listener container, prints {@code READY}, and runs until it is killed (SIGTERM closes the
 * context).
 */
public final class KafkaServiceChild {
    private KafkaServiceChild() {}

    public static void main(String[] args) {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(
                SpringKafkaListenerBenchmark.config(args[0])).web(WebApplicationType.NONE)
                .properties(Arrays.copyOfRange(args, 1, args.length)).run();
        SpringKafkaListenerBenchmark.startContainers(context);
        System.out.println("READY");
        System.out.flush();
    }
}
