package dev.idemkit.adapters.kafka;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * What a subscription knows of one assigned partition, and the rules that keep its commit honest: the records fetched
 * and not settled (queued, or handed to the handler), the commit point (the lowest unsettled offset, never past what
 * was fetched), blocks (a rewind to an offset, or a retry copy not due yet: the partition paused and sought back, what
 * is queued from there dropped), backpressure, and how often each record was given back in a row.
 *
 * <p>No Kafka client here: the subscription's poll thread applies what the ledger says (pause, seek, resume, commit);
 * its workers take records from it and report them settled or given back. Thread-safe: every method holds the ledger's
 * lock, except {@link #settle} and the flags read without it, which are concurrent structures or volatile.
 */
final class PartitionLedger {
    /** Bytes of fetched records (keys and values) queued before the partition is paused, beside the record count. */
    static final long MAX_QUEUED_BYTES = 8L * 1024 * 1024;
    /** The longest a record given back again and again waits before its next try. */
    static final Duration MAX_REWIND_PAUSE = Duration.ofMinutes(5);

    final TopicPartition tp;
    /** The retry topic's bucket, or empty for the work topic. */
    private final Optional<Duration> bucket;
    private final int maxQueued;
    private final ArrayDeque<ConsumerRecord<byte[], byte[]>> queued = new ArrayDeque<>();
    private long queuedBytes;
    /** Offsets fetched and not settled: dispatched or still queued. */
    private final ConcurrentSkipListSet<Long> unsettled = new ConcurrentSkipListSet<>();
    private long fetchedUpTo = -1;
    private long dispatchedUpTo = -1;
    /** Records from here on are dropped until the poll thread has sought back here and the pause is over. */
    private long blockedAt = -1;
    /** A block the poll thread has not applied yet (pause + seek to {@code blockedAt}); it is not lifted before. */
    private boolean seekPending;
    private long resumeAtMillis;
    private boolean scheduled;
    private volatile boolean backpressured;
    private volatile long lastCommitted = -1;
    private volatile boolean revoked;
    /** How often each record was given back in a row: its pause doubles, so a write that never succeeds backs off. */
    private final Map<Long, Integer> givenBack = new ConcurrentHashMap<>();

    /**
     * @param bucket the retry topic's bucket (its records wait until they are due), or empty for the work topic
     * @param maxQueued records queued before the partition is paused
     */
    PartitionLedger(TopicPartition tp, Optional<Duration> bucket, int maxQueued) {
        this.tp = tp;
        this.bucket = bucket;
        this.maxQueued = maxQueued;
    }

    boolean retryTopic() {
        return bucket.isPresent();
    }

    /** What {@link #accept} asks of the poll thread. */
    record Accepted(boolean scheduleDrain, boolean pause) {}

    /**
     * Fetched records join the queue (those at or after a block, or already fetched, are dropped: they come again).
     *
     * @return whether a worker must be scheduled to drain the queue, and whether the partition must be paused because
     *     too much is queued
     */
    synchronized Accepted accept(List<ConsumerRecord<byte[], byte[]>> records) {
        for (ConsumerRecord<byte[], byte[]> r : records) {
            if ((blockedAt >= 0 && r.offset() >= blockedAt) || r.offset() < fetchedUpTo) {
                continue;
            }
            unsettled.add(r.offset());
            queued.add(r);
            queuedBytes += bytes(r);
            fetchedUpTo = r.offset() + 1;
        }
        boolean schedule = !scheduled && !queued.isEmpty();
        if (schedule) {
            scheduled = true;
        }
        boolean pause = !backpressured && (queued.size() >= maxQueued || queuedBytes >= MAX_QUEUED_BYTES);
        if (pause) {
            backpressured = true;
        }
        return new Accepted(schedule, pause);
    }

    /** What a worker draining the partition does next. */
    sealed interface Next {
        /** Hand this record to the handler. */
        record Dispatch(ConsumerRecord<byte[], byte[]> record) implements Next {}

        /** Nothing to do: the queue is empty, the partition is leaving, or a retry copy is not due yet. */
        record Stop() implements Next {}

        /** Let other partitions have a worker: schedule another drain of this one. */
        record Yield() implements Next {}
    }

    private static final Next STOP = new Next.Stop();
    private static final Next YIELD = new Next.Yield();

    /**
     * The next record to hand over, in offset order. A retry copy that is not due blocks the partition until it is
     * (everything from it on fetched again then); another group's retry copy is settled at once (it is theirs).
     *
     * @param handedThisTurn records this worker handed over in its turn so far
     * @param turn records a worker hands over before it yields
     * @param ours whether a retry copy was written by this topic's group
     */
    synchronized Next next(int handedThisTurn, int turn, boolean closing, long nowMillis,
            Predicate<ConsumerRecord<byte[], byte[]>> ours) {
        while (true) {
            if (revoked || closing) {
                queued.clear(); // stay unsettled: the commit stops before them and they are fetched again
                queuedBytes = 0;
                scheduled = false;
                return STOP;
            }
            if (handedThisTurn >= turn && !queued.isEmpty()) {
                return YIELD;
            }
            ConsumerRecord<byte[], byte[]> r = queued.poll();
            if (r == null) {
                scheduled = false;
                return STOP;
            }
            queuedBytes -= bytes(r);
            if (bucket.isPresent() && !ours.test(r)) {
                unsettled.remove(r.offset()); // another group's retry copy of the same work topic: theirs
                continue;
            }
            if (bucket.isPresent()) {
                long due = KafkaTopics.dueAt(r, bucket.get());
                if (due > nowMillis) {
                    queued.addFirst(r);
                    queuedBytes += bytes(r);
                    scheduled = false;
                    block(r.offset(), due);
                    return STOP;
                }
            }
            dispatchedUpTo = r.offset() + 1;
            return new Next.Dispatch(r);
        }
    }

    /** A record handed over was settled (acked, moved to a retry topic, or dead-lettered). */
    void settle(long offset) {
        unsettled.remove(offset);
        if (!givenBack.isEmpty()) { // almost always empty: no boxing on the ack path
            givenBack.remove(offset);
        }
    }

    /** How a give-back went: the how-many-th in a row for that record, and how long the partition waits. */
    record GiveBack(int times, long pauseMillis) {}

    /**
     * A record handed over is given back (its settle failed, or it was abandoned): the partition is blocked at it for
     * {@code pause}, doubled per give-back of the same record in a row, at most {@link #MAX_REWIND_PAUSE}.
     */
    GiveBack giveBack(long offset, Duration pause, long nowMillis) {
        if (givenBack.size() > 10_000) {
            givenBack.clear();
        }
        int times = givenBack.merge(offset, 1, Integer::sum);
        long millis = Math.min(MAX_REWIND_PAUSE.toMillis(), pause.toMillis() << Math.min(20, times - 1));
        block(offset, nowMillis + millis);
        return new GiveBack(times, millis);
    }

    /**
     * Every offset from {@code offset} on is dropped from the queue and from the unsettled set: safe, since the commit
     * point is capped by {@code fetchedUpTo}, which goes back to {@code offset} (and stays at or below the block) until
     * they are fetched again. Never forward: when the fetch has not reached the record again yet (a late give-back of an
     * earlier delivery), the block goes back to where the fetch is, so nothing between is skipped. Two blocks in any
     * order end at the lower offset, and a block is never lifted before its seek was applied.
     */
    synchronized void block(long offset, long resumeAt) {
        unsettled.remove(offset);
        long target = Math.min(offset, fetchedUpTo);
        fetchedUpTo = target;
        if (revoked || (blockedAt >= 0 && blockedAt <= target)) {
            return; // leaving (the next owner fetches it), or already going back to an earlier record
        }
        // only what is queued from the target on is dropped (and fetched again); earlier records stay queued
        queued.removeIf(q -> {
            if (q.offset() >= target) {
                unsettled.remove(q.offset());
                queuedBytes -= bytes(q);
                return true;
            }
            return false;
        });
        blockedAt = target;
        seekPending = true;
        resumeAtMillis = resumeAt;
    }

    /**
     * The offset to pause and seek to for a block not applied yet; empty when none. The block stays pending (not lifted)
     * until {@link #seekApplied} reports that very seek done: a seek that failed is tried again.
     */
    synchronized OptionalLong pendingSeek() {
        if (!seekPending || revoked) {
            return OptionalLong.empty();
        }
        return OptionalLong.of(blockedAt);
    }

    /** The poll thread paused the partition and sought to {@code offset}; a lower block since then stays pending. */
    synchronized void seekApplied(long offset) {
        if (seekPending && blockedAt == offset) {
            seekPending = false;
        }
    }

    /**
     * Lifts what is over at {@code nowMillis}: a block whose seek was applied and whose time came, backpressure once
     * the queue is down to half.
     *
     * @return whether the partition may be resumed (nothing holds it paused any more)
     */
    synchronized boolean resumeIfDue(long nowMillis) {
        if (blockedAt >= 0 && !seekPending && resumeAtMillis <= nowMillis) {
            blockedAt = -1;
            return !backpressured;
        }
        if (backpressured && queued.size() <= maxQueued / 2 && queuedBytes <= MAX_QUEUED_BYTES / 2) {
            backpressured = false;
            return blockedAt < 0;
        }
        return false;
    }

    boolean backpressured() {
        return backpressured;
    }

    /** The offset a commit may name: every record below it is settled. -1 when nothing was fetched. */
    synchronized long commitPoint() {
        if (fetchedUpTo < 0) {
            return -1;
        }
        Long first = unsettled.ceiling(Long.MIN_VALUE);
        return first == null ? fetchedUpTo : Math.min(first, fetchedUpTo);
    }

    /**
     * The partition starts at {@code offset}, every record before it settled (a position the store committed): the
     * commit point is {@code offset} until records are fetched, so Kafka's committed offset catches up with it even
     * when nothing is left to fetch.
     */
    synchronized void startAt(long offset) {
        if (fetchedUpTo < 0) {
            fetchedUpTo = offset;
        }
    }

    /**
     * The commit point as it will be once the records at {@code offsets} are settled (and nothing else changes): the
     * lowest other unsettled offset, capped by what was fetched; -1 when nothing was fetched. Only ever lower than the
     * truth at the moment the settle lands (other records settle meanwhile), never higher: what a store may write
     * with the effects of those records (offsets in the database).
     */
    synchronized long positionAfter(Set<Long> offsets) {
        if (fetchedUpTo < 0) {
            return -1;
        }
        for (Long o : unsettled) {
            if (o >= fetchedUpTo) {
                break;
            }
            if (!offsets.contains(o)) {
                return Math.min(o, fetchedUpTo);
            }
        }
        return fetchedUpTo;
    }

    /** Whether every record handed to the handler is settled (what is only queued does not count). */
    synchronized boolean dispatchedAllSettled() {
        Long first = unsettled.ceiling(Long.MIN_VALUE);
        return first == null || first >= dispatchedUpTo;
    }

    long lastCommitted() {
        return lastCommitted;
    }

    /** A commit of {@code offset} succeeded (commits may complete out of order: the highest wins). */
    synchronized void committed(long offset) {
        lastCommitted = Math.max(lastCommitted, offset);
    }

    boolean revoked() {
        return revoked;
    }

    /** The partition is leaving this consumer: nothing more is handed over, blocks are not applied. */
    void revoke() {
        revoked = true;
    }

    private static long bytes(ConsumerRecord<byte[], byte[]> r) {
        return Math.max(0, r.serializedKeySize()) + Math.max(0, r.serializedValueSize());
    }
}
