package dev.idemkit.benchmarks;

import dev.idemkit.adapters.rabbit.RabbitMessageTransport;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.config.Sources;
import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.ports.out.Subscription;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.camel.CamelContext;

/**
 * The consuming process of the peers suite's kill comparison ({@link PeerKills}): one service (idemkit or a Camel
 * configuration) consuming one queue into the run's schema until it is SIGKILLed (or stopped by SIGTERM). Prints
 * {@code READY} once its consumers are subscribed. Arguments: service, queue, schema, consumer name, consumers,
 * prefetch.
 */
public final class PeerChild {
    private PeerChild() {}

    public static void main(String[] args) throws Exception {
        String service = args[0];
        String queue = args[1];
        String schema = args[2];
        String name = args[3];
        int consumers = Integer.parseInt(args[4]);
        int prefetch = Integer.parseInt(args[5]);
        AppSettings settings = Benchmark.settingsFor(
                AppSettings.resolve(new Sources(Map.of(), System.getenv(), new Properties())), schema,
                BenchMain.LOCAL_PG);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(stopped::countDown));
        if (service.equals(PeersBenchmark.IDEMKIT) || service.equals(PeersBenchmark.IDEMKIT_SINGLE)) {
            try (Assembly assembly = Assembly.start(settings);
                    RabbitMessageTransport t = Benchmark.transport(settings, consumers, prefetch, "peer-child");
                    PeersBenchmark.Idemkit idemkit = PeersBenchmark.Idemkit.of(service, assembly, name);
                    Subscription s = t.subscribe(queue, idemkit.handler())) {
                System.out.println("READY");
                stopped.await();
                idemkit.close(); // as serve stops: the batches settle first, then the subscription closes
            }
            return;
        }
        AppSettings.PostgresChoice pg = settings.store().postgres();
        BenchDatabase db = new BenchDatabase(pg.url().orElseThrow(), pg.user(), pg.password(), schema);
        try (CamelPeer camel = new CamelPeer(db, settings.transport().rabbitUri(), consumers);
                CamelContext context = camel.context(CamelPeer.Mode.of(service), queue, name, consumers, prefetch,
                        new AtomicLong(), new AtomicLong())) {
            context.getRouteController().startRoute(name);
            System.out.println("READY");
            stopped.await();
        }
    }
}
