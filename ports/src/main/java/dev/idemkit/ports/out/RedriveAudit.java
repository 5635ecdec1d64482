package dev.idemkit.ports.out;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * The record of redrives and dry runs, written by the redrive operation (whoever called it: the console, the command
 * line): one is recorded when it starts, each dead letter's result as it is done, and how it ended; a redrive whose
 * process was killed stays {@code running}, with what it did until then. {@link #inMemory} keeps the last entries of
 * this process; a store keeps them durably (the app's {@code PostgresRedriveAudit}). Implementations are thread-safe.
 */
public interface RedriveAudit {
    /** What was done with one dead letter. */
    record Result(String deadLetterId, boolean found, String action) {}

    /** One recorded redrive or dry run; {@code state}: running, done or failed ({@code error} says why). */
    record Entry(long id, Instant at, String operator, String approver, String reason, String queue, boolean dryRun,
            int ids, List<Result> results, String state, String error) {
        public Entry {
            results = List.copyOf(results);
        }
    }

    /** Records the start of a redrive or dry run of {@code ids} dead letters; its id. */
    long begin(Instant at, String operator, String approver, String reason, String queue, boolean dryRun, int ids);

    /** Records one dead letter's result. */
    void result(long entry, Result result);

    /** Records the end: done when {@code error} is null, else failed. */
    void finish(long entry, String error);

    /** The newest {@code max} entries, newest first. */
    List<Entry> entries(int max);

    /** The last {@code capacity} entries of this process. */
    static RedriveAudit inMemory(int capacity) {
        return new RedriveAudit() {
            private final Deque<Entry> entries = new ArrayDeque<>();
            private long next = 1;

            @Override
            public synchronized long begin(Instant at, String operator, String approver, String reason, String queue,
                    boolean dryRun, int ids) {
                entries.addFirst(new Entry(next, at, operator, approver, reason, queue, dryRun, ids, List.of(),
                        "running", null));
                while (entries.size() > capacity) {
                    entries.removeLast();
                }
                return next++;
            }

            @Override
            public synchronized void result(long entry, Result result) {
                replace(entry, e -> {
                    List<Result> rs = new ArrayList<>(e.results());
                    rs.add(result);
                    return new Entry(e.id(), e.at(), e.operator(), e.approver(), e.reason(), e.queue(), e.dryRun(),
                            e.ids(), rs, e.state(), e.error());
                });
            }

            @Override
            public synchronized void finish(long entry, String error) {
                replace(entry, e -> new Entry(e.id(), e.at(), e.operator(), e.approver(), e.reason(), e.queue(),
                        e.dryRun(), e.ids(), e.results(), error == null ? "done" : "failed", error));
            }

            private void replace(long id, java.util.function.UnaryOperator<Entry> change) {
                List<Entry> all = new ArrayList<>(entries);
                entries.clear();
                for (Entry e : all) {
                    entries.addLast(e.id() == id ? change.apply(e) : e);
                }
            }

            @Override
            public synchronized List<Entry> entries(int max) {
                return entries.stream().limit(max).toList();
            }
        };
    }
}
