package dev.idemkit.adapters.redis;

import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.ports.out.EffectFailedException;
import dev.idemkit.ports.out.Guarded;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The inbox for bulk deliveries (a broker batch): the claims of all deliveries go out as one claim script per
 * cluster slot (one in all on a single server, at most 256 keys each,
 * pipelined together: one round trip), the effects of the claimed ones run, and their completions go out the
 * same way: two round trips per batch. Each key is claimed and completed with exactly the semantics of
 * {@link RedisInboxStore}; the scripts only do many keys' steps per call. A key held by another live delivery (or twice in
 * one batch) is not waited for: its result carries {@link ClaimHeldException} and the delivery must be retried.
 */
public final class RedisBulkInbox {
    /** The effect of one delivery of the batch. */
    @FunctionalInterface
    public interface BulkEffect<R> {
        R run(InboxDelivery delivery, RedisUnitOfWork work) throws Exception;
    }

    /** What happened to one delivery: {@code result} when decided, {@code failure} (retry it) otherwise. */
    public record BulkResult<R>(InboxDelivery delivery, Optional<Guarded<R>> result, Optional<RuntimeException> failure) {}

    private final RedisInboxStore store;

    public RedisBulkInbox(RedisInboxStore store) {
        this.store = Objects.requireNonNull(store, "store");
    }

    /** Runs each delivery's effect at most once per key; results in the order of {@code deliveries}. */
    public <R> List<BulkResult<R>> runEachOnce(List<InboxDelivery> deliveries, BulkEffect<R> effect) {
        Objects.requireNonNull(effect, "effect");
        int n = deliveries.size();
        List<String> keys = new ArrayList<>(n);
        List<String> mine = new ArrayList<>(n);
        for (InboxDelivery d : deliveries) {
            keys.add(store.layout().inbox(d.key()));
            mine.add(InboxAnswers.claimValue(d.fingerprint()));
        }
        List<String> claimed = store.commands().claim(keys, mine);
        List<BulkResult<R>> results = new ArrayList<>(Collections.nCopies(n, null));
        List<Integer> toComplete = new ArrayList<>();
        List<InboxCommands.Completion> completions = new ArrayList<>();
        List<R> values = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            InboxDelivery d = deliveries.get(i);
            InboxAnswers.KeyValue existing = InboxAnswers.KeyValue.of(claimed.get(i), mine.get(i));
            if (!(existing instanceof InboxAnswers.KeyValue.Ours)) {
                results.set(i, decided(d, existing));
                continue;
            }
            RedisUnitOfWork work = store.newWork(keys.get(i));
            try {
                values.add(effect.run(d, work));
                work.close();
                toComplete.add(i);
                completions.add(new InboxCommands.Completion(keys.get(i), mine.get(i), InboxAnswers.completed(d.fingerprint()),
                        work.staged()));
            } catch (Throwable t) {
                work.close();
                store.release(d.key(), keys.get(i), mine.get(i), t);
                results.set(i, failed(d, EffectFailedException.propagate(t)));
            }
        }
        settle(deliveries, toComplete, completions, values, results, (i, j, answer) -> {
            InboxDelivery d = deliveries.get(i);
            if (answer instanceof InboxAnswers.CompletionAnswer.Lost) {
                return failed(d, InboxAnswers.lost(d.key(), store.settings().leaseTtl()));
            }
            String r = answer.text();
            RuntimeException failure = InboxAnswers.completionFailure(d.key(), r, completions.get(j).staged(), true);
            if (InboxAnswers.releasable(r)) {
                store.release(d.key(), keys.get(i), mine.get(i), failure);
            }
            return failed(d, failure);
        });
        return results;
    }

    /**
     * The batch in ONE round trip, for effects whose every write is staged in their {@link RedisUnitOfWork}: all
     * effects run first, then one script per slot applies the writes of each absent key and marks it completed
     * (see {@link RedisInboxStore#runOnceStaged}: the effect also runs for duplicates, whose writes are dropped,
     * so it must not act outside its unit of work). A key held by a live claim is not waited for:
     * {@link ClaimHeldException}, retry it. A key given twice in the batch is processed by its first occurrence and
     * decided like any completed key for the second (duplicate, or reused id).
     */
    public <R> List<BulkResult<R>> runEachOnceStaged(List<InboxDelivery> deliveries, BulkEffect<R> effect) {
        Objects.requireNonNull(effect, "effect");
        int n = deliveries.size();
        List<BulkResult<R>> results = new ArrayList<>(Collections.nCopies(n, null));
        List<Integer> sent = new ArrayList<>();
        List<InboxCommands.Completion> completions = new ArrayList<>();
        List<R> values = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            InboxDelivery d = deliveries.get(i);
            String key = store.layout().inbox(d.key());
            RedisUnitOfWork work = store.newWork(key);
            try {
                values.add(effect.run(d, work));
                sent.add(i);
                completions.add(new InboxCommands.Completion(key, "", InboxAnswers.completed(d.fingerprint()), work.staged()));
            } catch (Throwable t) {
                Optional<Outcome> decided = store.decidedAfterFailure(d.key(), d.fingerprint(), t);
                results.set(i, decided.isPresent()
                        ? new BulkResult<>(d, Optional.of(Guarded.of(decided.get())), Optional.empty())
                        : failed(d, EffectFailedException.propagate(t)));
            } finally {
                work.close();
            }
        }
        settle(deliveries, sent, completions, values, results, (i, j, answer) -> {
            InboxDelivery d = deliveries.get(i);
            return answer instanceof InboxAnswers.CompletionAnswer.Found found
                    ? decided(d, InboxAnswers.KeyValue.of(found.value(), null))
                    : failed(d, InboxAnswers.completionFailure(d.key(), answer.text(), completions.get(j).staged(), false));
        });
        return results;
    }

    /** What to make of a completion answer other than OK, for delivery i (the j-th completion). */
    private interface NotCompleted<R> {
        BulkResult<R> result(int i, int j, InboxAnswers.CompletionAnswer answer);
    }

    /** Sends the completions (one round trip) and fills in the result of each delivery in {@code sent}. */
    private <R> void settle(List<InboxDelivery> deliveries, List<Integer> sent, List<InboxCommands.Completion> completions,
            List<R> values, List<BulkResult<R>> results, NotCompleted<R> otherwise) {
        List<String> done = store.commands().complete(completions);
        for (int j = 0; j < sent.size(); j++) {
            int i = sent.get(j);
            InboxAnswers.CompletionAnswer answer = InboxAnswers.CompletionAnswer.of(done.get(j));
            results.set(i, answer instanceof InboxAnswers.CompletionAnswer.Applied
                    ? new BulkResult<>(deliveries.get(i), Optional.of(Guarded.processed(values.get(j))), Optional.empty())
                    : otherwise.result(i, j, answer));
        }
    }

    /** The result for a key found completed (duplicate or reuse) or held by another delivery (retry). */
    private static <R> BulkResult<R> decided(InboxDelivery d, InboxAnswers.KeyValue existing) {
        Optional<Outcome> settled;
        try {
            settled = InboxAnswers.settled(d.key(), d.fingerprint(), existing);
        } catch (RuntimeException failure) {
            return failed(d, failure);
        }
        return settled.isPresent() ? new BulkResult<>(d, Optional.of(Guarded.of(settled.get())), Optional.empty())
                : failed(d, new ClaimHeldException("message " + d.key().messageId()
                        + " is being processed by another delivery; retry later"));
    }

    private static <R> BulkResult<R> failed(InboxDelivery d, RuntimeException failure) {
        return new BulkResult<>(d, Optional.empty(), Optional.of(failure));
    }
}
