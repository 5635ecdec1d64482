package dev.idemkit.ports.memory;

import dev.idemkit.domain.Message;
import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.domain.deadletter.DeadLetterHeaders;
import dev.idemkit.domain.deadletter.AttemptHistory;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.deadletter.DeadLetter;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.DeadLetterEntry;
import dev.idemkit.ports.out.DeadLetterQueue;
import dev.idemkit.ports.out.Delivery;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import dev.idemkit.ports.out.TransportException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The reference transport and its dead-letter queues, in memory. Every subscription gets at most
 * {@code concurrency} unsettled deliveries at once, handled on a worker pool. A retry is a task on a
 * scheduler that puts the message back on its queue after the delay, with the attempt number + 1
 * and the failed attempt appended to the history it carries: no thread sleeps, and other messages
 * keep flowing meanwhile. A redrive republishes with the domain's {@code DeadLetterHeaders.redrive} headers. One lock guards all queue state. Thread-safe.
 */
public final class InMemoryMessageTransport implements MessageTransport, DeadLetterQueue {
    public static final String REDRIVE_APPROVED_BY = DeadLetterHeaders.REDRIVE_APPROVED_BY;
    public static final String REDRIVE_REASON = DeadLetterHeaders.REDRIVE_REASON;
    public static final int DEFAULT_CONCURRENCY = 8;
    private static final System.Logger LOG = System.getLogger(InMemoryMessageTransport.class.getName());
    private static final Duration DEFAULT_GRACE = Duration.ofSeconds(5);

    private final int concurrency;
    private final Clock clock;
    private final Duration grace;
    private final ExecutorService workers = Executors.newCachedThreadPool(daemons("in-memory-delivery"));
    private final ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor(daemons("in-memory-retry"));
    private final Object lock = new Object();
    private final Map<String, QueueState> queues = new HashMap<>();
    private boolean closed;

    public InMemoryMessageTransport() {
        this(DEFAULT_CONCURRENCY, Clock.system());
    }

    public InMemoryMessageTransport(int concurrency, Clock clock) {
        this(concurrency, clock, DEFAULT_GRACE);
    }

    /**
     * @param concurrency the most unsettled deliveries one subscription holds at once
     * @param grace how long closing a subscription waits for in-flight deliveries before giving them back
     */
    public InMemoryMessageTransport(int concurrency, Clock clock, Duration grace) {
        if (concurrency < 1) {
            throw new IllegalArgumentException("concurrency must be at least 1, got " + concurrency);
        }
        this.concurrency = concurrency;
        this.clock = Objects.requireNonNull(clock, "clock");
        this.grace = Objects.requireNonNull(grace, "grace");
    }

    @Override
    public Subscription subscribe(String queue, DeliveryHandler handler) {
        synchronized (lock) {
            requireOpen();
            Consumer consumer = new Consumer(queue, handler);
            state(queue).consumers.add(consumer);
            dispatch(queue);
            return consumer;
        }
    }

    @Override
    public void publish(String queue, OutgoingMessage message) {
        enqueue(new Envelope(new Message(message.id(), message.body(), message.headers(), queue), 1, List.of(), false));
    }

    /**
     * Publishes a message as a broken producer might: any raw id (null, empty, invalid), any headers.
     * For tests of what the consumer does with such messages.
     */
    public void publishRaw(String queue, String rawId, byte[] body, Map<String, String> headers) {
        enqueue(new Envelope(new Message(rawId, body, headers, queue), 1, List.of(), false));
    }

    @Override
    public java.util.Optional<java.time.Duration> retention(String queue) {
        return java.util.Optional.empty(); // kept until removed
    }

    @Override
    public long depth(String queue) {
        synchronized (lock) {
            QueueState q = queues.get(queue);
            return q == null ? 0 : q.dead.size();
        }
    }

    @Override
    public List<DeadLetterEntry> peek(String queue, int max) {
        synchronized (lock) {
            QueueState q = queues.get(queue);
            return q == null ? List.of() : q.dead.values().stream().limit(max).toList();
        }
    }

    @Override
    public Optional<DeadLetterEntry> find(String queue, String deadLetterId) {
        synchronized (lock) {
            QueueState q = queues.get(queue);
            return q == null ? Optional.empty() : Optional.ofNullable(q.dead.get(deadLetterId));
        }
    }

    @Override
    public boolean redrive(String queue, String deadLetterId, Approval approval) {
        synchronized (lock) {
            QueueState q = queues.get(queue);
            DeadLetterEntry entry = q == null ? null : q.dead.remove(deadLetterId);
            if (entry == null) {
                return false;
            }
            Message original = entry.deadLetter().original();
            Map<String, String> headers = new HashMap<>(original.headers());
            headers.putAll(DeadLetterHeaders.redrive(approval, java.util.Optional.of(entry.deadLetter().reason())));
            enqueue(new Envelope(new Message(original.rawId(), original.body(), headers, original.originQueue()), 1,
                    List.of(), false));
            return true;
        }
    }

    /** Closes every subscription (in-flight deliveries are given back), then stops delivering and retrying. */
    @Override
    public void close() {
        List<Consumer> consumers = new ArrayList<>();
        synchronized (lock) {
            if (closed) {
                return;
            }
            queues.values().forEach(q -> consumers.addAll(q.consumers));
        }
        consumers.forEach(Consumer::close);
        synchronized (lock) {
            closed = true;
        }
        retries.shutdownNow();
        workers.shutdown();
    }

    private void enqueue(Envelope envelope) {
        synchronized (lock) {
            requireOpen();
            String queue = envelope.message().originQueue();
            state(queue).ready.addLast(envelope);
            dispatch(queue);
        }
    }

    /** Hands ready messages to consumers with free capacity, round robin. Caller holds the lock. */
    private void dispatch(String queue) {
        if (closed) {
            return;
        }
        QueueState q = state(queue);
        while (!q.ready.isEmpty()) {
            Consumer consumer = q.nextWithCapacity(concurrency);
            if (consumer == null) {
                return;
            }
            InMemoryDelivery delivery = new InMemoryDelivery(consumer, q.ready.pollFirst());
            consumer.inFlight.add(delivery);
            workers.execute(() -> handle(consumer, delivery));
        }
    }

    private static void handle(Consumer consumer, InMemoryDelivery delivery) {
        try {
            consumer.handler.onDelivery(delivery);
        } catch (Throwable t) {
            // like a broker, keep the message unsettled until the subscription closes and gives it back
            LOG.log(System.Logger.Level.ERROR, "delivery handler threw; message " + delivery.message()
                    + " stays unsettled until the subscription closes", t);
        }
    }

    private QueueState state(String queue) {
        return queues.computeIfAbsent(queue, q -> new QueueState());
    }

    private void requireOpen() {
        if (closed) {
            throw new TransportException("the in-memory transport is closed");
        }
    }

    private static ThreadFactory daemons(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** A message in a queue: what it is, which attempt comes next, and the failed attempts so far. */
    private record Envelope(Message message, int attempt, List<AttemptRecord> history, boolean redelivered) {}

    private static final class QueueState {
        final Deque<Envelope> ready = new ArrayDeque<>();
        final Map<String, DeadLetterEntry> dead = new LinkedHashMap<>();
        final List<Consumer> consumers = new ArrayList<>();
        int next;

        Consumer nextWithCapacity(int concurrency) {
            for (int i = 0; i < consumers.size(); i++) {
                Consumer c = consumers.get((next + i) % consumers.size());
                if (c.inFlight.size() < concurrency) {
                    next = (next + i + 1) % consumers.size();
                    return c;
                }
            }
            return null;
        }
    }

    private final class Consumer implements Subscription {
        final String queue;
        final DeliveryHandler handler;
        final Set<InMemoryDelivery> inFlight = new LinkedHashSet<>();
        boolean stopped;

        Consumer(String queue, DeliveryHandler handler) {
            this.queue = queue;
            this.handler = handler;
        }

        @Override
        public void close() {
            synchronized (lock) {
                if (stopped) {
                    return;
                }
                stopped = true;
                state(queue).consumers.remove(this);
                long deadline = System.nanoTime() + grace.toNanos();
                try {
                    for (long left = grace.toNanos(); !inFlight.isEmpty() && left > 0; left = deadline - System.nanoTime()) {
                        TimeUnit.NANOSECONDS.timedWait(lock, left);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                List<InMemoryDelivery> unsettled = new ArrayList<>(inFlight);
                inFlight.clear();
                for (int i = unsettled.size() - 1; i >= 0; i--) {
                    InMemoryDelivery d = unsettled.get(i);
                    d.released = true;
                    state(queue).ready.addFirst(new Envelope(d.envelope.message(), d.envelope.attempt(),
                            d.envelope.history(), true));
                }
                dispatch(queue);
            }
        }
    }

    private final class InMemoryDelivery implements Delivery {
        final Consumer consumer;
        final Envelope envelope;
        boolean settled;
        boolean released;

        InMemoryDelivery(Consumer consumer, Envelope envelope) {
            this.consumer = consumer;
            this.envelope = envelope;
        }

        @Override
        public Message message() {
            return envelope.message();
        }

        @Override
        public int attempt() {
            return envelope.attempt();
        }

        @Override
        public List<AttemptRecord> history() {
            return envelope.history();
        }

        @Override
        public boolean redelivered() {
            return envelope.redelivered();
        }

        @Override
        public void ack() {
            settle(() -> { });
        }

        @Override
        public void retryAfter(Duration delay, AttemptRecord failed) {
            Envelope next = new Envelope(envelope.message(), envelope.attempt() + 1,
                    AttemptHistory.append(envelope.history(), failed), true);
            settle(() -> {
                try {
                    retries.schedule(() -> enqueueUnlessClosed(next), delay.toNanos(), TimeUnit.NANOSECONDS);
                } catch (RejectedExecutionException closing) {
                    LOG.log(System.Logger.Level.WARNING, "transport closing: retry of {0} dropped", envelope.message());
                }
            });
        }

        @Override
        public void deadLetter(String reason, AttemptRecord failed) {
            settle(() -> {
                String id = UUID.randomUUID().toString();
                DeadLetter dl = new DeadLetter(envelope.message(), reason,
                        AttemptHistory.append(envelope.history(), failed), clock.now());
                state(envelope.message().originQueue()).dead.put(id, new DeadLetterEntry(id, dl));
            });
        }

        /** Settles once, with {@code action} in the same locked step; a delivery given back on close is ignored. */
        private void settle(Runnable action) {
            synchronized (lock) {
                if (released) {
                    return;
                }
                if (settled) {
                    throw new IllegalStateException("delivery of " + envelope.message() + " is already settled");
                }
                settled = true;
                consumer.inFlight.remove(this);
                action.run();
                lock.notifyAll();
                dispatch(consumer.queue);
            }
        }
    }

    private void enqueueUnlessClosed(Envelope envelope) {
        synchronized (lock) {
            if (!closed) {
                enqueue(envelope);
            }
        }
    }
}
