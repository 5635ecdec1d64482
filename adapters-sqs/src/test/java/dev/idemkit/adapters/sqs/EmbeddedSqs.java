package dev.idemkit.adapters.sqs;

import java.net.URI;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Props;
import org.elasticmq.StrictSQSLimits$;
import org.elasticmq.actor.QueueManagerActor;
import org.elasticmq.rest.sqs.SQSRestServer;
import org.elasticmq.rest.sqs.SQSRestServerBuilder;
import org.elasticmq.util.NowProvider;
import java.util.concurrent.TimeUnit;
import scala.Option;
import scala.concurrent.Await;
import scala.concurrent.duration.FiniteDuration;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * ElasticMQ inside the test JVM, on a free loopback port. {@link #withShiftableClock()} replaces its
 * clock (the {@code NowProvider} of the queue-manager actor) with one that tests can move forward, so
 * that time-based behaviour such as the 5-minute FIFO deduplication window is tested without waiting.
 */
final class EmbeddedSqs implements AutoCloseable {
    /** The real clock plus an offset that a test moves forward. */
    static final class ShiftableClock extends NowProvider {
        private final AtomicLong offsetMillis = new AtomicLong();

        void advance(Duration d) {
            offsetMillis.addAndGet(d.toMillis());
        }

        @Override
        public long nowMillis() {
            return System.currentTimeMillis() + offsetMillis.get();
        }

        @Override
        public OffsetDateTime now() {
            return OffsetDateTime.now().plusNanos(offsetMillis.get() * 1_000_000L);
        }
    }

    private final SQSRestServer server;
    private final ActorSystem system;
    private final ShiftableClock clock;
    private final URI endpoint;

    private EmbeddedSqs(SQSRestServer server, ActorSystem system, ShiftableClock clock) {
        this.server = server;
        this.system = system;
        this.clock = clock;
        this.endpoint = URI.create("http://127.0.0.1:" + server.waitUntilStarted().localAddress().getPort());
    }

    static EmbeddedSqs start() {
        return new EmbeddedSqs(SQSRestServerBuilder.withInterface("127.0.0.1").withDynamicPort().start(), null, null);
    }

    static EmbeddedSqs withShiftableClock() {
        ShiftableClock clock = new ShiftableClock();
        ActorSystem system = ActorSystem.create("idemkit-sqs-test-" + UUID.randomUUID().toString().substring(0, 8));
        ActorRef queueManager = system.actorOf(Props.create(QueueManagerActor.class, clock, StrictSQSLimits$.MODULE$,
                Option.empty()));
        SQSRestServer server = SQSRestServerBuilder.withActorSystem(system).withQueueManagerActor(queueManager)
                .withInterface("127.0.0.1").withDynamicPort().start();
        return new EmbeddedSqs(server, system, clock);
    }

    ShiftableClock clock() {
        if (clock == null) {
            throw new IllegalStateException("this server runs on the real clock");
        }
        return clock;
    }

    URI endpoint() {
        return endpoint;
    }

    /** Test settings: 1 s long polls, 5 s visibility with a 1.5 s heartbeat, 4 handlers. */
    SqsSettings settings() {
        return SqsSettings.local(endpoint).withWaitTimeSeconds(1).withMaxConcurrentHandlers(4)
                .withVisibility(Duration.ofSeconds(5), Duration.ofMillis(1500)).withCloseGrace(Duration.ofSeconds(5));
    }

    /** A raw client, for what a test must do below the adapter (malformed messages, attribute checks). */
    SqsClient rawClient() {
        return SqsClients.create(settings());
    }

    /** Sleeps {@code d} (an interrupt ends it early and is kept). */
    static void pause(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static byte[] bytes(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    static String uniqueName(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 12);
    }

    @Override
    public void close() {
        // the JDK keeps idle keep-alive connections open; without a hard deadline the HTTP server waits
        // for them (about a minute) before it stops
        try {
            Await.result(server.waitUntilStarted().terminate(FiniteDuration.create(1, TimeUnit.SECONDS)),
                    FiniteDuration.create(5, TimeUnit.SECONDS));
        } catch (Exception e) {
            throw new IllegalStateException("embedded SQS did not stop", e);
        }
        server.stopAndWait();
        if (system != null) {
            system.terminate();
        }
    }
}
