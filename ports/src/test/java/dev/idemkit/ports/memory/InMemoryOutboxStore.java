package dev.idemkit.ports.memory;

import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.ports.out.OutboxEntry;
import dev.idemkit.ports.out.OutboxMessage;
import dev.idemkit.ports.out.OutboxRelayStore;
import dev.idemkit.ports.out.OutboxRow;
import dev.idemkit.ports.out.OutboxStore;
import dev.idemkit.ports.out.RelayOutcome;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.BiConsumer;

/**
 * The reference outbox in memory: rows in append order, keys held by an in-flight relay pass, outcomes recorded when
 * the pass ends. Appends are committed at once ({@link #append}); there is no unit of work to roll back. Thread-safe;
 * the publisher runs outside the lock, like a database relay holding only its rows.
 */
public class InMemoryOutboxStore implements OutboxStore {
    private final List<Row> rows = new ArrayList<>();
    private final Set<String> held = new HashSet<>();
    private long seq;

    private static final class Row {
        final OutboxRow base;
        final List<AttemptRecord> failures = new ArrayList<>();
        int attempt = 1;
        Instant nextAttemptAt;
        Instant sentAt;
        Instant parkedAt;
        String parkReason;
        String redrive;

        Row(OutboxRow base) {
            this.base = base;
        }

        OutboxRow row() {
            return new OutboxRow(base.id(), base.seq(), base.message(), base.appendedAt(), attempt, failures);
        }

        boolean due(Instant now) {
            return sentAt == null && parkedAt == null && (nextAttemptAt == null || !nextAttemptAt.isAfter(now));
        }

        OutboxEntry entry() {
            OutboxEntry.State state = sentAt != null && parkedAt != null ? OutboxEntry.State.DISCARDED
                    : sentAt != null ? OutboxEntry.State.SENT
                    : parkedAt != null ? OutboxEntry.State.PARKED : OutboxEntry.State.PENDING;
            return new OutboxEntry(row(), state, Optional.ofNullable(nextAttemptAt), Optional.ofNullable(sentAt),
                    Optional.ofNullable(parkedAt), Optional.ofNullable(parkReason), Optional.ofNullable(redrive));
        }
    }

    /** Appends and commits. */
    public synchronized String append(OutboxMessage message) {
        String id = UUID.randomUUID().toString();
        rows.add(new Row(new OutboxRow(id, ++seq, message, Instant.now(), 1, List.of())));
        notifyAll();
        return id;
    }

    /** The rows a pass may hand out: the first unsent row of each key not held, if due, and the due rows after it. */
    protected synchronized Map<String, List<OutboxRow>> handOut(int max, Instant now) {
        Map<String, List<OutboxRow>> runs = new LinkedHashMap<>();
        Set<String> blocked = respectsHeldKeys() ? new HashSet<>(held) : new HashSet<>();
        int n = 0;
        for (Row r : rows) {
            String key = r.base.message().orderingKey();
            if (r.sentAt != null || blocked.contains(key)) {
                continue;
            }
            if (n < max && r.due(now)) {
                runs.computeIfAbsent(key, k -> new ArrayList<>()).add(r.row());
                n++;
            } else {
                blocked.add(key); // the rest of the key waits behind this row (or the bound is reached)
            }
        }
        held.addAll(runs.keySet());
        return runs;
    }

    /** Whether a key held by a pass in flight is skipped (always, but in a deliberately broken subclass). */
    protected boolean respectsHeldKeys() {
        return true;
    }

    @Override
    public int relay(int max, Instant now, Publisher publisher) {
        Map<String, List<OutboxRow>> runs = handOut(max, now);
        if (runs.isEmpty()) {
            return 0;
        }
        Map<String, RelayOutcome> outcomes = Map.of();
        try {
            outcomes = publisher.publish(List.copyOf(runs.values()));
        } finally {
            record(runs, outcomes);
        }
        return runs.values().stream().mapToInt(List::size).sum();
    }

    private synchronized void record(Map<String, List<OutboxRow>> runs, Map<String, RelayOutcome> outcomes) {
        apply(outcomes);
        held.removeAll(runs.keySet());
    }

    private synchronized void apply(Map<String, RelayOutcome> outcomes) {
        for (Row r : rows) {
            RelayOutcome o = outcomes.get(r.base.id());
            if (o instanceof RelayOutcome.Sent s) {
                r.sentAt = s.at();
            } else if (o instanceof RelayOutcome.Failed f) {
                r.failures.add(f.failed());
                r.attempt++;
                r.nextAttemptAt = f.retryAt();
            } else if (o instanceof RelayOutcome.Parked p) {
                r.failures.add(p.failed());
                r.attempt++;
                r.nextAttemptAt = null;
                r.parkedAt = p.failed().at();
                r.parkReason = p.reason();
            }
        }
    }

    /**
     * A pass that goes on while it publishes: more of the keys it holds (the rows after the last handed out, in order,
     * stopping at the first that is not due), then new keys; outcomes applied when it ends, and only if its publisher
     * returned (a publisher that throws: nothing of the pass recorded, as a rolled-back transaction).
     */
    @Override
    public int relay(int first, int max, Instant now, StreamingPublisher publisher) {
        if (first < 1 || max < first) {
            throw new IllegalArgumentException("a pass needs 1 <= first <= max, got " + first + " and " + max);
        }
        Map<String, List<OutboxRow>> runs = handOut(first, now);
        if (runs.isEmpty()) {
            return 0;
        }
        Pass pass = new Pass(runs, max, now);
        boolean returned = false;
        try {
            publisher.publish(List.copyOf(runs.values()), pass);
            returned = true;
        } finally {
            synchronized (this) {
                if (returned) {
                    apply(pass.recorded);
                }
                held.removeAll(pass.last.keySet());
            }
        }
        return pass.handed;
    }

    /** One streaming pass's state: per held key the seq of its last row handed out, and what it recorded. */
    private final class Pass implements OutboxRelayStore.Pass {
        final Map<String, Long> last = new HashMap<>();
        final Map<String, RelayOutcome> recorded = new HashMap<>();
        /** The key of every row handed out, by id. */
        final Map<String, String> keyOf = new HashMap<>();
        /** Keys with a failed or parked row in this pass: asked for no more. */
        final java.util.Set<String> stopped = new java.util.HashSet<>();
        final int max;
        final Instant now;
        int handed;

        Pass(Map<String, List<OutboxRow>> runs, int max, Instant now) {
            this.max = max;
            this.now = now;
            took(runs);
        }

        private void took(Map<String, List<OutboxRow>> runs) {
            runs.forEach((key, run) -> {
                last.put(key, run.get(run.size() - 1).seq());
                run.forEach(r -> keyOf.put(r.id(), key));
                handed += run.size();
            });
        }

        @Override
        public void more(Collection<String> keys, int wanted, BiConsumer<List<List<OutboxRow>>, Throwable> answer) {
            Map<String, List<OutboxRow>> out = new LinkedHashMap<>();
            synchronized (InMemoryOutboxStore.this) {
                int budget = Math.min(wanted, max - handed);
                List<String> going = keys.stream().filter(k -> last.containsKey(k) && !stopped.contains(k)).distinct()
                        .toList();
                int perKey = going.isEmpty() ? 0 : Math.max(1, budget / going.size());
                int n = 0;
                for (String key : going) {
                    List<OutboxRow> run = new ArrayList<>();
                    for (Row r : rows) {
                        if (n >= budget || run.size() >= perKey) {
                            break;
                        }
                        if (!r.base.message().orderingKey().equals(key) || r.base.seq() <= last.get(key)
                                || r.sentAt != null) {
                            continue;
                        }
                        if (!r.due(now)) {
                            break; // a run is a prefix
                        }
                        run.add(r.row());
                        n++;
                    }
                    if (!run.isEmpty()) {
                        out.put(key, run);
                    }
                }
                if (n < budget) {
                    out.putAll(handOut(budget - n, now));
                }
                took(out);
            }
            answer.accept(List.copyOf(out.values()), null);
        }

        @Override
        public void record(Map<String, RelayOutcome> outcomes) {
            synchronized (InMemoryOutboxStore.this) {
                outcomes.forEach((id, o) -> {
                    String key = keyOf.get(id);
                    if (key == null || recorded.containsKey(id)) {
                        return; // not this pass's row, or recorded already: ignored, as the database store does
                    }
                    recorded.put(id, o);
                    if (!(o instanceof RelayOutcome.Sent)) {
                        stopped.add(key);
                    }
                });
            }
        }
    }

    @Override
    public synchronized void awaitAppend(Duration max) throws InterruptedException {
        wait(Math.max(1, max.toMillis()));
    }

    @Override
    public synchronized List<OutboxEntry> parked(int max) {
        return rows.stream().filter(r -> r.parkedAt != null && r.sentAt == null).limit(max).map(Row::entry).toList();
    }

    @Override
    public synchronized List<OutboxEntry> unsent(int max) {
        return rows.stream().filter(r -> r.sentAt == null).limit(max).map(Row::entry).toList();
    }

    @Override
    public synchronized Optional<OutboxEntry> find(String id) {
        return rows.stream().filter(r -> r.base.id().equals(id)).findFirst().map(Row::entry);
    }

    @Override
    public synchronized boolean redrive(String id, Approval approval) {
        for (Row r : rows) {
            if (r.base.id().equals(id) && r.parkedAt != null && r.sentAt == null) {
                r.parkedAt = null;
                r.parkReason = null;
                r.nextAttemptAt = null;
                r.attempt = 1;
                r.redrive = "approved by " + approval.approvedBy() + " at " + approval.at() + ": " + approval.reason();
                notifyAll();
                return true;
            }
        }
        return false;
    }

    @Override
    public synchronized boolean discard(String id, Approval approval) {
        for (Row r : rows) {
            if (r.base.id().equals(id) && r.parkedAt != null && r.sentAt == null) {
                r.sentAt = Instant.now();
                r.redrive = "discarded, never published, by " + approval.approvedBy() + " at " + approval.at() + ": "
                        + approval.reason();
                notifyAll();
                return true;
            }
        }
        return false;
    }

    @Override
    public synchronized Stats stats(Instant now) {
        long pending = rows.stream().filter(r -> r.sentAt == null && r.parkedAt == null).count();
        long parked = rows.stream().filter(r -> r.sentAt == null && r.parkedAt != null).count();
        Optional<Duration> oldest = rows.stream().filter(r -> r.sentAt == null && r.parkedAt == null).findFirst()
                .map(r -> r.base.appendedAt().isBefore(now) ? Duration.between(r.base.appendedAt(), now) : Duration.ZERO);
        return new Stats(pending, parked, oldest);
    }

    @Override
    public synchronized long purgeSent(Instant before, int batch, int maxBatches) {
        long limit = (long) batch * maxBatches;
        long removed = 0;
        for (var it = rows.iterator(); it.hasNext() && removed < limit; ) {
            Row r = it.next();
            if (r.sentAt != null && r.sentAt.isBefore(before)) {
                it.remove();
                removed++;
            }
        }
        return removed;
    }
}
