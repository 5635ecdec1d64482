package dev.idemkit.adapters.kafka;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The threads of a subscription, a consumer group's ({@link KafkaSubscription}) or a share group's
 * ({@link KafkaShareSubscription}): one poll thread that owns the consumer, and the workers that run the handler.
 *
 * <p>The poll thread sets up (subscribes) and then takes one turn after another until the subscription is closing. A
 * wakeup or an interrupt is how {@code close()} stops a poll: while not closing it is logged and polling goes on. A
 * set-up or turn that fails is logged and tried again after a second, so a broker that is away does not end the
 * subscription. However the loop ends, the shut-down runs on this thread (it owns the consumer), then
 * {@link #awaitStopped} returns.
 */
final class PollThread {
    private static final Logger LOG = LoggerFactory.getLogger(PollThread.class);
    private static final AtomicInteger SEQ = new AtomicInteger();

    private final String topic;
    private final String what;
    private final Thread thread;
    private final CountDownLatch stopped = new CountDownLatch(1);

    /**
     * @param kind names the threads: {@code idemkit-<kind>-<n>-poll-<topic>}
     * @param what names the subscription in the log ("subscription", "share subscription")
     * @param closing whether the subscription is closing (read before every turn)
     * @param setUp run until it succeeds once, before the first turn
     * @param turn one poll and what follows it
     * @param shutDown run once the loop ended, on the poll thread
     */
    PollThread(String kind, String topic, String what, BooleanSupplier closing, Runnable setUp, Runnable turn,
            Runnable shutDown) {
        this.topic = topic;
        this.what = what;
        this.thread = new Thread(() -> loop(closing, setUp, turn, shutDown),
                "idemkit-" + kind + "-" + SEQ.incrementAndGet() + "-poll-" + topic);
        this.thread.setDaemon(true);
    }

    /** A pool of {@code n} daemon worker threads, named after the poll thread. */
    ExecutorService workers(int n) {
        String prefix = thread.getName().replace("-poll-" + topic, "-worker-");
        AtomicInteger worker = new AtomicInteger();
        return Executors.newFixedThreadPool(n, r -> {
            Thread t = new Thread(r, prefix + worker.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    void start() {
        thread.start();
    }

    private void loop(BooleanSupplier closing, Runnable setUp, Runnable turn, Runnable shutDown) {
        try {
            boolean ready = false;
            while (!closing.getAsBoolean()) {
                try {
                    if (!ready) {
                        setUp.run();
                        ready = true;
                    }
                    turn.run();
                } catch (WakeupException | InterruptException e) {
                    if (!closing.getAsBoolean()) {
                        LOG.warn("topic={} {} woken up while not closing; polling on", topic, what);
                    }
                } catch (RuntimeException e) {
                    LOG.warn("topic={} {} poll failed ({}); trying again in 1 s", topic, what, e.toString());
                    sleepQuietly(1000);
                }
            }
        } catch (RuntimeException | Error e) {
            LOG.error("topic={} the {} stopped: {}", topic, what, e.toString(), e);
        } finally {
            try {
                shutDown.run();
            } catch (RuntimeException | Error e) {
                LOG.error("topic={} the {}'s shut-down failed: {}", topic, what, e.toString(), e);
            } finally {
                stopped.countDown();
            }
        }
    }

    /** Waits up to {@code bound} for the loop and its shut-down to end (the caller woke the consumer first). */
    void awaitStopped(Duration bound) {
        try {
            if (!stopped.await(bound.toMillis(), TimeUnit.MILLISECONDS)) {
                LOG.warn("topic={} the {} did not stop in time", topic, what);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops {@code workers}, letting what runs finish for up to {@code grace}, then interrupting it. */
    static void stopWorkers(ExecutorService workers, Duration grace) {
        workers.shutdown();
        try {
            if (!workers.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                workers.shutdownNow();
            }
        } catch (InterruptedException e) {
            workers.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
