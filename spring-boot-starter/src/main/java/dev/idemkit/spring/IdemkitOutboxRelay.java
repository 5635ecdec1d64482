package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.PostgresOutboxStore;
import dev.idemkit.ports.out.OutboxMaintenance;
import dev.idemkit.ports.service.OutboxRelay;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Runs the ports' {@link OutboxRelay} (the same relay as {@code idemkit serve}'s) from the service's start to its stop,
 * and reads the outbox's state every {@link #STATE_EVERY_SECONDS} seconds for the gauges. It stops after the web server and
 * the listener containers finished their work ({@link #getPhase}), before the data source closes: a pass under way when the service stops finishes and records
 * what it published (a row published but not recorded is published again with the same id by the next start, and the
 * consumer's inbox absorbs it).
 */
final class IdemkitOutboxRelay implements SmartLifecycle {
    private static final Logger LOG = LoggerFactory.getLogger(IdemkitOutboxRelay.class);
    static final long STATE_EVERY_SECONDS = 5;

    private final Supplier<OutboxRelay> relays;
    private final PostgresOutboxStore store;
    private final OutboxMeters meters;
    private final Supplier<String> transportHealth;
    private OutboxRelay relay;
    private ScheduledExecutorService state;

    /**
     * @param relays a new relay per start (a stopped relay does not start again)
     * @param transportHealth the relay's transport's health ({@code MessageTransport.health})
     */
    IdemkitOutboxRelay(Supplier<OutboxRelay> relays, PostgresOutboxStore store, OutboxMeters meters,
            Supplier<String> transportHealth) {
        this.relays = Objects.requireNonNull(relays, "relays");
        this.transportHealth = Objects.requireNonNull(transportHealth, "transportHealth");
        this.store = Objects.requireNonNull(store, "store");
        this.meters = Objects.requireNonNull(meters, "meters");
    }

    @Override
    public synchronized void start() {
        if (relay != null) {
            return;
        }
        relay = relays.get();
        relay.start();
        state = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "idemkit-outbox-state");
            t.setDaemon(true);
            return t;
        });
        state.scheduleWithFixedDelay(this::readState, 0, STATE_EVERY_SECONDS, TimeUnit.SECONDS);
    }

    /** The outbox's counts now (also what health shows). */
    OutboxMaintenance.Stats stats() {
        return store.stats(Instant.now());
    }

    /** Whether the relay's transport can publish: {@code UP}, or {@code DOWN: } and why. */
    String transportHealth() {
        return transportHealth.get();
    }

    private void readState() {
        try {
            meters.state(stats());
        } catch (RuntimeException e) {
            LOG.debug("idemkit outbox state not read: {}", e.toString()); // health says why the store is down
        }
    }

    @Override
    public synchronized void stop() {
        if (relay == null) {
            return;
        }
        state.shutdownNow();
        relay.close();
        relay = null;
        state = null;
    }

    @Override
    public synchronized boolean isRunning() {
        return relay != null;
    }

    /**
     * Below the web server's graceful shutdown ({@code DEFAULT_PHASE - 2048}) and the listener containers: the relay
     * stops after they finished their work, so the events of the last requests and deliveries go out before the stop
     * (Spring stops the higher phases first), and starts before they take any.
     */
    @Override
    public int getPhase() {
        return SmartLifecycle.DEFAULT_PHASE - 4096;
    }
}
