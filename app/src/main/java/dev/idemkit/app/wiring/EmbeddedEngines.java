package dev.idemkit.app.wiring;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Props;
import org.elasticmq.StrictSQSLimits$;
import org.elasticmq.actor.QueueManagerActor;
import org.elasticmq.rest.sqs.SQSRestServer;
import org.elasticmq.rest.sqs.SQSRestServerBuilder;
import org.elasticmq.util.NowProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;
import scala.concurrent.Await;
import scala.concurrent.duration.FiniteDuration;

/**
 * Real engines started inside this process when nothing is configured: a PostgreSQL server from
 * Maven-shipped binaries, and ElasticMQ, an SQS-compatible server. Both are the real thing, not fakes;
 * both stop on close and keep nothing. ElasticMQ runs on a clock that {@link #advanceSqsClock} can move
 * forward, so exercise 3 can show the 5-minute FIFO deduplication window expire without waiting.
 */
public final class EmbeddedEngines implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EmbeddedEngines.class);

    /** The real clock plus an offset that only moves forward. */
    static final class ShiftableClock extends NowProvider {
        private static final long serialVersionUID = 1L;
        private final AtomicLong offsetMillis = new AtomicLong();

        @Override
        public long nowMillis() {
            return System.currentTimeMillis() + offsetMillis.get();
        }

        @Override
        public OffsetDateTime now() {
            return OffsetDateTime.now().plusNanos(offsetMillis.get() * 1_000_000L);
        }
    }

    private EmbeddedPostgres postgres;
    private SQSRestServer sqs;
    private ActorSystem sqsActors;
    private ShiftableClock sqsClock;
    private URI sqsEndpoint;

    /** Starts (once) an embedded PostgreSQL; returns its JDBC URL for user postgres, database postgres. */
    public synchronized String postgresJdbcUrl() {
        if (postgres == null) {
            try {
                postgres = EmbeddedPostgres.builder().start();
            } catch (IOException e) {
                throw new IllegalStateException("could not start the embedded PostgreSQL: " + e.getMessage(), e);
            }
            LOG.info("embedded PostgreSQL started on port {}", postgres.getPort());
        }
        return postgres.getJdbcUrl("postgres", "postgres");
    }

    /** Starts (once) an embedded ElasticMQ on a free loopback port; returns its endpoint. */
    public synchronized URI sqsEndpoint() {
        if (sqs == null) {
            sqsClock = new ShiftableClock();
            sqsActors = ActorSystem.create("idemkit-sqs-" + UUID.randomUUID().toString().substring(0, 8));
            ActorRef queues = sqsActors.actorOf(Props.create(QueueManagerActor.class, sqsClock,
                    StrictSQSLimits$.MODULE$, Option.empty()));
            sqs = SQSRestServerBuilder.withActorSystem(sqsActors).withQueueManagerActor(queues)
                    .withInterface("127.0.0.1").withDynamicPort().start();
            sqsEndpoint = URI.create("http://127.0.0.1:" + sqs.waitUntilStarted().localAddress().getPort());
            LOG.info("embedded ElasticMQ (SQS) started on {}", sqsEndpoint);
        }
        return sqsEndpoint;
    }

    /** True when this process runs the SQS server (so its clock can be moved). */
    public synchronized boolean runsSqs() {
        return sqs != null;
    }

    /** Moves the embedded SQS server's clock forward (exercise 3's dedup window). */
    public synchronized void advanceSqsClock(Duration by) {
        if (sqsClock == null) {
            throw new IllegalStateException("no embedded SQS server runs in this process");
        }
        sqsClock.offsetMillis.addAndGet(by.toMillis());
    }

    @Override
    public synchronized void close() {
        if (sqs != null) {
            try {
                // idle keep-alive connections would otherwise hold the server open for about a minute
                Await.result(sqs.waitUntilStarted().terminate(FiniteDuration.create(1, TimeUnit.SECONDS)),
                        FiniteDuration.create(5, TimeUnit.SECONDS));
                sqs.stopAndWait();
                sqsActors.terminate();
            } catch (Exception e) {
                LOG.warn("stopping embedded ElasticMQ failed: {}", e.toString());
            }
            sqs = null;
        }
        if (postgres != null) {
            try {
                postgres.close();
            } catch (IOException | RuntimeException e) {
                LOG.warn("stopping embedded PostgreSQL failed: {}", e.toString());
            }
            postgres = null;
        }
    }
}
