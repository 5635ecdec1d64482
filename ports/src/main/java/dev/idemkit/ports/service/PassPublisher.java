package dev.idemkit.ports.service;

import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutboxRelayStore;
import dev.idemkit.ports.out.OutboxRow;
import dev.idemkit.ports.out.RelayOutcome;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.UnaryOperator;

/**
 * One relay pass's publishing (docs/ARCHITECTURE.md section 9): the pass's rows written through the transport's
 * pipelined {@link MessageTransport#publishAsync}, up to {@code parallelism} keys at once and per key up to
 * {@code keyWindow} rows in flight, in order, a key's next row written as soon as a confirm makes room, a key's run
 * stopped at its first failure. While rows go out it asks the store for more ({@link OutboxRelayStore.Pass#more}) as
 * soon as no more than a hand-out is left to write or confirm (the keys running out of rows, and new keys), and hands
 * outcomes over in batches of half a hand-out ({@link OutboxRelayStore.Pass#record}), so the store's statements run
 * beside the publishing instead of between passes.
 *
 * <p>All writes happen on the calling thread; confirms and the store's answers only report back through one queue.
 * Returns only when every publish it wrote has its outcome (each is bounded by the transport's confirm timeout), even
 * when interrupted or when the store failed (then no further row is written): no publish of a pass may still be going
 * on once its rows are released, or a later row of a key could go out beside a retry of an earlier one from another
 * relay. One instance per pass; not thread-safe.
 */
final class PassPublisher implements OutboxRelayStore.StreamingPublisher {

    private final MessageTransport transport;
    private final UnaryOperator<String> queueName;
    private final int parallelism;
    private final int keyWindow;
    private final int handOut;
    /** Outcomes handed to the store at once while the pass goes on (the rest when it ends): half a hand-out. */
    private final int recordEvery;
    private final Clock clock;
    private final BiFunction<OutboxRow, Throwable, RelayOutcome> failureStep;
    private int sent;
    private int failures;
    private int parks;

    /**
     * @param handOut the rows asked for at once (a pass's first hand-out has as many)
     * @param failed the failure step's outcome for a row whose publish failed
     */
    PassPublisher(MessageTransport transport, UnaryOperator<String> queueName, int parallelism, int keyWindow,
            int handOut, Clock clock, BiFunction<OutboxRow, Throwable, RelayOutcome> failed) {
        this.transport = transport;
        this.queueName = queueName;
        this.parallelism = parallelism;
        this.keyWindow = keyWindow;
        this.handOut = handOut;
        this.recordEvery = Math.max(1, handOut / 2);
        this.clock = clock;
        this.failureStep = failed;
    }

    /** How the pass's rows went, to be counted once the store committed them. */
    record Tally(int sent, int failed, int parked) {}

    Tally tally() {
        return new Tally(sent, failures, parks);
    }

    /** A confirm (failure null) or a failed publish, of the row at {@code index} of its key's run. */
    private record Confirm(KeyRun key, int index, Throwable failure) {}

    /** The store's answer to {@link OutboxRelayStore.Pass#more}. */
    private record Answer(List<List<OutboxRow>> runs, Throwable failure) {}

    /** How long the pass waits for an event before it checks whether its store failed. */
    private static final long WAIT_SLICE_MS = 100;
    private final BlockingQueue<Object> events = new LinkedBlockingQueue<>();
    private final Map<String, KeyRun> keys = new LinkedHashMap<>();
    private final ArrayDeque<KeyRun> ready = new ArrayDeque<>();
    private Map<String, RelayOutcome> unrecorded = new HashMap<>();
    private int active;
    private int inFlight;
    private int unwritten;
    /** Keys whose rows are running out (fewer than half their last hand-out left to write), to ask more of. */
    private final Map<String, KeyRun> lowKeys = new LinkedHashMap<>();
    private List<String> askedKeys = List.of();
    private boolean asking;
    /** The store gave fewer rows than asked: it has no key this pass does not hold yet (or the pass is full). */
    private boolean newKeysDone;
    private boolean stopped;

    @Override
    public void publish(List<List<OutboxRow>> first, OutboxRelayStore.Pass pass) {
        boolean interrupted = false;
        try {
            add(first);
            while (true) {
                if (!stopped && pass.failed()) {
                    stopped = true; // a record failed: the pass will commit nothing; wait for what is in flight
                }
                while (!stopped && active < parallelism && !ready.isEmpty()) {
                    KeyRun key = ready.poll();
                    active++;
                    key.write();
                }
                if (!stopped && !asking && unwritten + inFlight <= handOut && (!lowKeys.isEmpty() || !newKeysDone)) {
                    flush(pass);
                    askedKeys = List.copyOf(lowKeys.keySet());
                    lowKeys.clear();
                    asking = true;
                    try {
                        pass.more(askedKeys, handOut, (runs, e) -> events.add(new Answer(runs, e)));
                    } catch (RuntimeException | Error e) {
                        asking = false; // no answer will come
                        throw e;
                    }
                }
                if (inFlight == 0 && !asking && (stopped || ready.isEmpty())) {
                    break;
                }
                Object event;
                try {
                    event = events.poll(WAIT_SLICE_MS, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                    stopped = true; // write no more; still wait for what was written and for an answer under way
                    continue;
                }
                if (event == null) {
                    giveUpAnAnswerOfAFailedStore(pass);
                    continue;
                }
                handle(event, pass);
                if (unrecorded.size() >= recordEvery) {
                    flush(pass);
                }
            }
            flush(pass);
        } catch (RuntimeException | Error e) {
            // unforeseen (a failure step or a store that broke its contract): no publish of this pass may still be in
            // flight once the store releases its keys, so wait for them before the failure goes on
            stopped = true;
            interrupted |= drain(pass);
            throw e;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * A store that failed may not be able to answer an ask (its answer could not be delivered): once it says it
     * failed, the pass writes nothing more and stops waiting for that answer; confirms are still awaited.
     */
    private void giveUpAnAnswerOfAFailedStore(OutboxRelayStore.Pass pass) {
        if (pass.failed()) {
            stopped = true;
            asking = false;
        }
    }

    private void handle(Object event, OutboxRelayStore.Pass pass) {
        if (event instanceof Answer a) {
            asking = false;
            if (a.failure() != null) {
                stopped = true; // the store failed: the pass records nothing; wait for what is in flight
            } else {
                answered(a.runs() == null ? List.of() : a.runs());
            }
            return;
        }
        Confirm c = (Confirm) event;
        inFlight--;
        KeyRun key = c.key();
        key.answered(c);
        if (!stopped && pass.failed()) {
            stopped = true; // the pass will commit nothing: no further row goes out
        }
        if (!stopped) {
            key.write();
        }
        if (key.idle()) {
            active--;
        }
    }

    /**
     * Waits for every publish in flight and an answer under way, writing nothing (an answer only while the store has
     * not failed); returns whether interrupted.
     */
    private boolean drain(OutboxRelayStore.Pass pass) {
        boolean interrupted = false;
        while (inFlight > 0 || asking) {
            try {
                Object event = events.poll(WAIT_SLICE_MS, TimeUnit.MILLISECONDS);
                if (event == null) {
                    giveUpAnAnswerOfAFailedStore(pass);
                } else if (event instanceof Answer) {
                    asking = false;
                } else {
                    inFlight--;
                }
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        return interrupted;
    }

    private void flush(OutboxRelayStore.Pass pass) {
        if (!unrecorded.isEmpty()) {
            for (RelayOutcome o : unrecorded.values()) {
                if (o instanceof RelayOutcome.Sent) {
                    sent++;
                } else if (o instanceof RelayOutcome.Failed) {
                    failures++;
                } else {
                    parks++;
                }
            }
            pass.record(unrecorded); // handed over: never touched here again
            unrecorded = new HashMap<>();
        }
    }

    /**
     * The store's answer: its rows added; an asked key that got none has nothing more for this pass (never asked
     * again); fewer rows than asked in all means no new key either.
     */
    private void answered(List<List<OutboxRow>> runs) {
        int n = 0;
        java.util.Set<String> got = new java.util.HashSet<>();
        for (List<OutboxRow> run : runs) {
            n += run.size();
            if (!run.isEmpty()) {
                got.add(run.get(0).message().orderingKey());
            }
        }
        for (String k : askedKeys) {
            if (!got.contains(k)) {
                keys.get(k).closed = true;
            }
        }
        askedKeys = List.of();
        if (n < handOut) {
            newKeysDone = true;
        }
        add(runs);
    }

    private void add(List<List<OutboxRow>> runs) {
        for (List<OutboxRow> run : runs) {
            if (run.isEmpty()) {
                continue;
            }
            String k = run.get(0).message().orderingKey();
            KeyRun key = keys.get(k);
            if (key == null) {
                key = new KeyRun(k);
                keys.put(k, key);
            } else if (key.failed) {
                continue; // never asked for; a store that sends it anyway gets no publish of it
            }
            boolean wasIdle = key.idle();
            key.add(run);
            if (wasIdle) {
                ready.add(key); // its slot was given back (or it never had one)
            }
        }
    }

    /**
     * One key's rows in a pass: written in order, up to {@code keyWindow} in flight. Outcomes: sent for the rows before
     * the first failure, the failure step's outcome for the first failed row, none for the rows after it (they are
     * handed out again after it, with the same ids: docs/ARCHITECTURE.md section 9).
     */
    private final class KeyRun {
        final String key;
        private final List<OutboxRow> rows = new ArrayList<>();
        private final List<Throwable> failures = new ArrayList<>();
        private final List<Boolean> confirmed = new ArrayList<>();
        private int written;
        private int recorded;
        private int inFlightHere;
        boolean failed;
        /** The store said it has nothing more of this key for this pass. */
        boolean closed;
        int lastAdded;

        KeyRun(String key) {
            this.key = key;
        }

        void add(List<OutboxRow> run) {
            for (OutboxRow r : run) {
                rows.add(r);
                failures.add(null);
                confirmed.add(false);
            }
            lastAdded = run.size();
            unwritten += run.size();
        }

        int unwritten() {
            return rows.size() - written;
        }

        /** Nothing in flight and nothing it may write: its slot is free. */
        boolean idle() {
            return inFlightHere == 0 && (failed || written == rows.size());
        }

        /** Writes what the window allows, counting each publish in flight as it is written. */
        void write() {
            while (!failed && written < rows.size() && inFlightHere < keyWindow) {
                int index = written++;
                unwritten--;
                OutboxRow row = rows.get(index);
                CompletableFuture<Void> f;
                try {
                    f = transport.publishAsync(queueName.apply(row.message().destination()), row.outgoing());
                } catch (RuntimeException | Error e) {
                    // an Error too (a body too large for memory): left without an outcome, the row would be handed
                    // out again at once, for ever; as a failure it backs off and, in the end, is parked with the reason
                    if (e instanceof VirtualMachineError && !(e instanceof OutOfMemoryError)) {
                        throw e;
                    }
                    f = CompletableFuture.failedFuture(e);
                }
                inFlightHere++;
                inFlight++;
                if (!closed && unwritten() <= lastAdded / 2) {
                    lowKeys.putIfAbsent(key, this);
                }
                f.whenComplete((ok, e) -> events.add(new Confirm(this, index, e == null ? null : unwrap(e))));
            }
        }

        void answered(Confirm c) {
            inFlightHere--;
            if (c.failure() == null) {
                confirmed.set(c.index(), true);
            } else {
                failures.set(c.index(), c.failure());
                if (!failed) {
                    failed = true; // write no more of this key, nor ask for more of it
                    unwritten -= rows.size() - written;
                    lowKeys.remove(key);
                }
            }
            record(); // the confirmed prefix, as far as it goes: its bodies are released as it grows
        }

        /**
         * In row order, as far as the answers go: sent up to the first failure, that one failed, the rest untouched (a
         * row is recorded only once every row before it was answered).
         */
        private void record() {
            while (recorded < written) {
                OutboxRow row = rows.get(recorded);
                Throwable failure = failures.get(recorded);
                if (failure != null) {
                    unrecorded.put(row.id(), failureStep.apply(row, failure));
                    recorded = Integer.MAX_VALUE; // nothing after the first failure
                    rows.replaceAll(r -> null); // none of them goes out again in this pass
                    return;
                }
                if (!confirmed.get(recorded)) {
                    return; // not answered yet: what follows waits for it
                }
                unrecorded.put(row.id(), new RelayOutcome.Sent(clock.now()));
                rows.set(recorded, null); // answered and recorded: its body is not kept for the rest of the pass
                recorded++;
            }
        }
    }

    private static Throwable unwrap(Throwable e) {
        return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }
}
