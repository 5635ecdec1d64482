package dev.idemkit.adapters.redis;

import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.Inbox;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.Fingerprint;
import dev.idemkit.ports.out.EffectFailedException;
import dev.idemkit.ports.out.Guarded;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.redisson.api.BatchOptions;
import org.redisson.api.RBatch;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * The inbox for bulk deliveries (a broker batch): the claims of all deliveries go out in one pipelined
 * {@code RBatch} (one round trip), the effects of the claimed ones run, and their completions go out in a
 * second pipeline. Each claim and each completion is still its own atomic script, exactly as in
 * {@link RedisInboxStore}; only the round trips are shared. A key held by another live delivery (or twice in
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
    private final RedissonClient client;

    public RedisBulkInbox(RedissonClient client, RedisInboxStore store) {
        this.client = Objects.requireNonNull(client, "client");
        this.store = Objects.requireNonNull(store, "store");
    }

    /** Runs each delivery's effect at most once per key; results in the order of {@code deliveries}. */
    public <R> List<BulkResult<R>> runEachOnce(List<InboxDelivery> deliveries, BulkEffect<R> effect) {
        Objects.requireNonNull(effect, "effect");
        int n = deliveries.size();
        String[] keys = new String[n];
        String[] mine = new String[n];
        RBatch claims = client.createBatch(BatchOptions.defaults());
        for (int i = 0; i < n; i++) {
            InboxDelivery d = deliveries.get(i);
            keys[i] = store.layout().inbox(d.key());
            mine[i] = "P:" + RedisInboxStore.token() + ":" + d.fingerprint().hex();
            claims.getScript(StringCodec.INSTANCE).evalAsync(keys[i], RScript.Mode.READ_WRITE, InboxScripts.CLAIM,
                    RScript.ReturnType.VALUE, List.of(keys[i]), mine[i],
                    Long.toString(store.settings().leaseTtl().toMillis()));
        }
        List<?> claimed = n == 0 ? List.of() : Failures.call("claim a batch of inbox keys", () -> claims.execute().getResponses());
        List<BulkResult<R>> results = new ArrayList<>(n);
        List<Integer> toComplete = new ArrayList<>();
        List<RedisUnitOfWork> works = new ArrayList<>();
        List<R> values = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            InboxDelivery d = deliveries.get(i);
            String existing = (String) claimed.get(i);
            results.add(null);
            if (existing != null && existing.startsWith("C:")) {
                Outcome o = Inbox.decide(Optional.of(new Fingerprint(existing.substring(2))), d.fingerprint());
                results.set(i, new BulkResult<>(d, Optional.of(Guarded.of(o)), Optional.empty()));
            } else if (existing != null) {
                results.set(i, new BulkResult<>(d, Optional.empty(), Optional.of(new ClaimHeldException(
                        "message " + d.key().messageId() + " is being processed by another delivery; retry later"))));
            } else {
                RedisUnitOfWork work = new RedisUnitOfWork(store.layout(), keys[i],
                        store.settings().topology() == RedisSettings.Topology.CLUSTER);
                try {
                    values.add(effect.run(d, work));
                    work.close();
                    toComplete.add(i);
                    works.add(work);
                } catch (Throwable t) {
                    work.close();
                    store.release(d.key(), keys[i], mine[i], t);
                    results.set(i, new BulkResult<>(d, Optional.empty(), Optional.of(EffectFailedException.propagate(t))));
                }
            }
        }
        complete(deliveries, keys, mine, toComplete, works, values, results);
        return results;
    }

    private <R> void complete(List<InboxDelivery> deliveries, String[] keys, String[] mine, List<Integer> toComplete,
            List<RedisUnitOfWork> works, List<R> values, List<BulkResult<R>> results) {
        if (toComplete.isEmpty()) {
            return;
        }
        RBatch completions = client.createBatch(BatchOptions.defaults());
        for (int j = 0; j < toComplete.size(); j++) {
            int i = toComplete.get(j);
            List<Object> ks = new ArrayList<>();
            List<Object> args = new ArrayList<>();
            ks.add(keys[i]);
            args.add(mine[i]);
            args.add("C:" + deliveries.get(i).fingerprint().hex());
            args.add(Long.toString(store.settings().retentionTtl().toMillis()));
            for (RedisUnitOfWork.Staged s : works.get(j).staged()) {
                ks.add(s.key());
                args.add(s.op());
                args.add(s.a());
                args.add(s.b());
            }
            completions.getScript(StringCodec.INSTANCE).evalAsync(keys[i], RScript.Mode.READ_WRITE,
                    InboxScripts.COMPLETE, RScript.ReturnType.VALUE, ks, args.toArray());
        }
        List<?> done = Failures.call("complete a batch of inbox keys", () -> completions.execute().getResponses());
        for (int j = 0; j < toComplete.size(); j++) {
            int i = toComplete.get(j);
            InboxDelivery d = deliveries.get(i);
            Object r = done.get(j);
            if ("OK".equals(r)) {
                results.set(i, new BulkResult<>(d, Optional.of(Guarded.processed(values.get(j))), Optional.empty()));
            } else if ("LOST".equals(r)) {
                results.set(i, new BulkResult<>(d, Optional.empty(), Optional.of(new ClaimLostException("the claim on "
                        + d.key().messageId() + " expired before completion; nothing was written; retry"))));
            } else {
                IllegalStateException failure = new IllegalStateException("a staged write of " + d.key().messageId()
                        + " cannot apply (" + r + "); nothing was written and the claim was released");
                store.release(d.key(), keys[i], mine[i], failure);
                results.set(i, new BulkResult<>(d, Optional.empty(), Optional.of(failure)));
            }
        }
    }
}
