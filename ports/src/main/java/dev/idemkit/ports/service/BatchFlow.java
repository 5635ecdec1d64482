package dev.idemkit.ports.service;

import dev.idemkit.domain.Message;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.BatchEffect;
import dev.idemkit.ports.out.ConsumerEvents.Decision;
import dev.idemkit.ports.out.ConsumerEvents.Observation;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.ports.out.LogPosition;
import dev.idemkit.ports.out.UnitOfWork;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The one flow that settles a batch of deliveries (docs/ARCHITECTURE.md sections 8 and 13): their keys and the effects
 * of the new ones (their first deliveries, in arrival order) in ONE {@link InboxStore#runBatch}, then every delivery of
 * the batch acknowledged, duplicates included; an acknowledgement never precedes the commit of its key and effect.
 * What the batch cannot decide goes delivery by delivery through the single-message {@link DeliveryFlow} under the
 * same consumer (same keys), which processes, retries or dead-letters it: a delivery that fails the flow's check (no
 * usable id, too big), a reused id (rejected), and every delivery of a batch that failed twice (a deadlock between
 * concurrent batches passes the second time; a poison message fails again). An effect that throws an {@link Error}
 * (other than a {@link VirtualMachineError}) has failed its batch like any other.
 *
 * <p>Its front doors: the {@link BatchingConsumer} (a transport's subscription, its own batching threads) and adapters
 * of other worlds that receive batches themselves (a Spring batch listener container). Thread-safe.
 *
 * @param <U> the store's unit of work
 */
public final class BatchFlow<U extends UnitOfWork> {
    private static final System.Logger LOG = System.getLogger(BatchFlow.class.getName());

    /** A delivery of the batch with the observation the flow's hooks started for it on arrival. */
    public record Item(Delivery delivery, Observation observation) {
        public Item {
            Objects.requireNonNull(delivery, "delivery");
            Objects.requireNonNull(observation, "observation");
        }
    }

    /**
     * What {@link #settle} did.
     *
     * @param batched deliveries settled by the batch (acknowledged after its commit)
     * @param single deliveries handed to the single-message flow
     * @param unsettled of those, the ones the single-message flow could not settle (their retry or dead-letter copy
     *     was not confirmed): left with the broker, which delivers them again
     * @param runNanos time in the store's batch (keys, effects, commit, the second try), when it returned
     * @param settleNanos time acknowledging and reporting the batch's deliveries
     */
    public record Result(int batched, int single, int unsettled, long runNanos, long settleNanos) {}

    private final DeliveryFlow flow;
    private final InboxStore<U> inbox;
    private final BatchHandler<? super U> batchHandler;
    private final MessageHandler<? super U> handler;

    /**
     * Batches whose effects are {@code batchHandler} for all new messages at once; {@code handler} is the same effect
     * for one message, for the single-message flow.
     */
    public BatchFlow(DeliveryFlow flow, InboxStore<U> inbox, BatchHandler<? super U> batchHandler,
            MessageHandler<? super U> handler) {
        this.flow = Objects.requireNonNull(flow, "flow");
        this.inbox = Objects.requireNonNull(inbox, "inbox");
        this.batchHandler = Objects.requireNonNull(batchHandler, "batchHandler");
        this.handler = Objects.requireNonNull(handler, "handler");
    }

    /** The single-message flow a delivery the batch cannot decide goes through. */
    public DeliveryFlow flow() {
        return flow;
    }

    /** Starts the hooks' observation of a delivery on its arrival: an {@link Item} for {@link #settle}. */
    public Item item(Delivery delivery) {
        return new Item(delivery, flow.started(delivery));
    }

    /** Whether {@code delivery} passes the flow's check and so may be batched at all. */
    public boolean batchable(Delivery delivery) {
        return flow.rejection(delivery.message()).isEmpty();
    }

    /**
     * One delivery through the single-message flow; false when it could not be settled (logged; the broker has it
     * again).
     */
    public boolean single(Item item) {
        try {
            flow.run(item.delivery(), item.observation(), inbox, handler);
            return true;
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "decision=single-failed consumer={0} cause=\"{1}\" (left unsettled: the broker"
                    + " redelivers it)", flow.settings().name().value(), e.toString());
            return false;
        }
    }

    /**
     * Settles every delivery of {@code batch}, each exactly once, adding each to {@code settled} as it is settled or
     * handed to the single-message flow (so that a caller whose thread fails midway knows which are left).
     */
    public Result settle(List<Item> batch, Set<Item> settled) {
        List<Item> taken = new ArrayList<>(batch.size());
        int single = 0;
        int unsettled = 0;
        for (Item item : batch) {
            if (batchable(item.delivery())) {
                taken.add(item);
            } else {
                settled.add(item);
                single++;
                unsettled += single(item) ? 0 : 1;
            }
        }
        if (taken.isEmpty()) {
            return new Result(0, single, unsettled, 0, 0);
        }
        List<InboxDelivery> deliveries = new ArrayList<>(taken.size());
        Map<InboxKey, Arrival> firstOf = new HashMap<>();
        for (Item item : taken) {
            Message m = item.delivery().message();
            InboxKey key = flow.key(m);
            deliveries.add(new InboxDelivery(key, m.fingerprint()));
            firstOf.putIfAbsent(key, new Arrival(firstOf.size(), m));
        }
        long began = System.nanoTime();
        List<Outcome> outcomes;
        try {
            outcomes = runBatch(deliveries, positions(taken), firstOf);
        } catch (RuntimeException | Error first) {
            // an Error of the effect too (an AssertionError, a class that failed to load): a failed batch, handed
            // on like any other, never a thread's end with deliveries in hand
            if (first instanceof VirtualMachineError vme) {
                throw vme;
            }
            // once more, whole: concurrent batches that locked rows in different orders lose one of them to a
            // deadlock, and its second run usually passes; a batch with a poison message fails again
            try {
                outcomes = runBatch(deliveries, positions(taken), firstOf);
            } catch (RuntimeException | Error e) {
                if (e instanceof VirtualMachineError vme) {
                    throw vme;
                }
                e.addSuppressed(first);
                LOG.log(Level.WARNING, "decision=batch-failed consumer={0} size={1} cause=\"{2}\" (each delivery goes"
                        + " through the single-message path)", flow.settings().name().value(), taken.size(),
                        e.toString());
                for (Item item : taken) {
                    settled.add(item);
                    single++;
                    unsettled += single(item) ? 0 : 1;
                }
                return new Result(0, single, unsettled, 0, 0);
            }
        }
        long ran = System.nanoTime();
        Duration each = Duration.ofNanos(ran - began).dividedBy(taken.size());
        List<Delivery> acks = new ArrayList<>(taken.size());
        List<Item> ackedItems = new ArrayList<>(taken.size());
        List<Outcome> acked = new ArrayList<>(taken.size());
        for (int i = 0; i < taken.size(); i++) {
            Item item = taken.get(i);
            Outcome outcome = outcomes.get(i);
            settled.add(item);
            if (outcome instanceof Outcome.Rejected) {
                single++; // the single-message flow decides it again (rejected) and dead-letters it with the reason
                unsettled += single(item) ? 0 : 1;
                continue;
            }
            acks.add(item.delivery());
            ackedItems.add(item);
            acked.add(outcome);
        }
        try {
            Delivery.ackAll(acks); // one broker operation per channel where the transport can
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "decision=ack-failed consumer={0} cause=\"{1}\" (the broker redelivers what was not"
                    + " acked; the inbox makes that harmless)", flow.settings().name().value(), e.toString());
        }
        for (int i = 0; i < acked.size(); i++) {
            try {
                ackedItems.get(i).observation().decided(acked.get(i).effectRan() ? Decision.PROCESSED
                        : Decision.DUPLICATE, each);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "consumer events failed: {0}", e.toString()); // observing changes nothing
            }
        }
        return new Result(acks.size(), single, unsettled, ran - began, System.nanoTime() - ran);
    }

    /**
     * Where the batch's partitions stand once all of it is settled, for a store that commits them with the batch
     * (section 14: offsets in the database); none otherwise.
     */
    private List<LogPosition> positions(List<Item> taken) {
        if (!inbox.keepsPositions()) {
            return List.of();
        }
        List<Delivery> deliveries = new ArrayList<>(taken.size());
        taken.forEach(item -> deliveries.add(item.delivery()));
        return Delivery.positionsAfter(deliveries);
    }

    /** The first delivery of a key in the batch, and where it arrived among the batch's keys. */
    private record Arrival(int index, Message message) {}

    /**
     * The store's step; the effect gets the new messages in the order they arrived (a store may hand them over in its
     * own order: PostgreSQL sorts the keys it inserts, so that concurrent batches lock them in one order).
     */
    private List<Outcome> runBatch(List<InboxDelivery> deliveries, List<LogPosition> positions,
            Map<InboxKey, Arrival> firstOf) {
        BatchEffect<U> effect = (work, fresh) -> {
            List<Arrival> arrivals = new ArrayList<>(fresh.size());
            for (InboxDelivery d : fresh) {
                arrivals.add(firstOf.get(d.key()));
            }
            arrivals.sort(java.util.Comparator.comparingInt(Arrival::index));
            List<Message> messages = new ArrayList<>(arrivals.size());
            for (Arrival a : arrivals) {
                messages.add(a.message());
            }
            batchHandler.handle(messages, work);
        };
        List<Outcome> outcomes = positions.isEmpty() ? inbox.runBatch(deliveries, effect)
                : inbox.runBatch(deliveries, positions, effect);
        if (outcomes.size() != deliveries.size()) {
            throw new IllegalStateException(outcomes.size() + " outcomes for " + deliveries.size() + " deliveries");
        }
        return outcomes;
    }
}
