package dev.idemkit.app.http;

import dev.idemkit.ports.in.DeadLetters.RedriveResult;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

/**
 * The console's redrives and dry runs, newest first, the last {@code capacity} of them, in this process. Each redrive is
 * also logged (operator, approver, reason, counts), and every republished message carries its approval in its headers;
 * this list is what the console shows afterwards. It does not survive a restart.
 */
public final class RedriveAudit {
    /** One recorded redrive or dry run. */
    /** {@code error}: why the redrive stopped before its last dead letter, or null. */
    public record Entry(long id, Instant at, String operator, String approver, String reason, String queue,
            boolean dryRun, List<RedriveResult> results, String error) {
        public Entry {
            results = List.copyOf(results);
        }
    }

    private final int capacity;
    private final Deque<Entry> entries = new ArrayDeque<>();
    private long next = 1;

    public RedriveAudit(int capacity) {
        this.capacity = capacity;
    }

    public synchronized Entry record(Instant at, String operator, String approver, String reason, String queue,
            boolean dryRun, List<RedriveResult> results, String error) {
        Entry e = new Entry(next++, at, operator, approver, reason, queue, dryRun, results, error);
        entries.addFirst(e);
        while (entries.size() > capacity) {
            entries.removeLast();
        }
        return e;
    }

    public synchronized List<Entry> entries() {
        return List.copyOf(entries);
    }
}
