package dev.idemkit.adapters.redis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.redisson.api.BatchOptions;
import org.redisson.api.RBatch;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * Sends the {@link InboxScripts} for one key or for many. Many keys are grouped by cluster slot (one group on a
 * single server) and cut into calls of at most {@link #MAX_KEYS_PER_CALL} deliveries, so that no script holds
 * the server for long; when there is more than one call they all go out in one pipelined {@code RBatch}, one
 * round trip. Results come back in the order of the input. Single-key steps of concurrent callers go through a
 * {@link Combiner} each (claims, completions), so that under load they share calls.
 */
final class InboxCommands {
    /** Deliveries per script call: bounds how long one call occupies the (single-threaded) server. */
    static final int MAX_KEYS_PER_CALL = 256;

    /** One delivery's completion: {@code expected} is our in-progress value, or empty to claim-and-complete if absent. */
    record Completion(String key, String expected, String done, List<RedisUnitOfWork.Staged> staged) {}

    /** Calls of one caller's step that may be out at once; more requests wait and go out combined. */
    static final int MAX_IN_FLIGHT = Integer.getInteger("idemkit.redis.combine.inFlight", 2);

    private record Call(String routingKey, List<Object> keys, List<Object> args) {}

    private record Claim(String key, String value) {}

    private final RedissonClient client;
    private final RScript script;
    private final RedisSettings settings;
    private final boolean cluster;
    private final Combiner<Claim> claims;
    private final Combiner<Completion> completions;
    private final Map<Integer, Combiner<Claim>> claimsBySlot = new ConcurrentHashMap<>();
    private final Map<Integer, Combiner<Completion>> completionsBySlot = new ConcurrentHashMap<>();

    InboxCommands(RedissonClient client, RedisSettings settings) {
        this.client = client;
        this.settings = settings;
        this.script = client.getScript(StringCodec.INSTANCE);
        this.cluster = settings.topology() == RedisSettings.Topology.CLUSTER;
        this.claims = claimCombiner();
        this.completions = completionCombiner();
    }

    private Combiner<Claim> claimCombiner() {
        return new Combiner<>(batch -> claimAsync(batch.stream().map(Claim::key).toList(),
                batch.stream().map(Claim::value).toList()), MAX_KEYS_PER_CALL, MAX_IN_FLIGHT);
    }

    private Combiner<Completion> completionCombiner() {
        return new Combiner<>(this::completeAsync, MAX_KEYS_PER_CALL, MAX_IN_FLIGHT);
    }

    /**
     * One caller's claim, combined with those of concurrent callers: "" when claimed, else the value there. On a
     * cluster each slot has its own combiner (and so its own calls in flight): a slow or failing node holds up
     * only the callers whose keys it serves, and a combined call never spans nodes.
     */
    String claim(String key, String value) {
        Combiner<Claim> combiner = cluster ? claimsBySlot.computeIfAbsent(KeyLayout.slot(key), s -> claimCombiner())
                : claims;
        return Failures.await("claim an inbox key", combiner.submit(new Claim(key, value)));
    }

    /** One caller's completion, combined with those of concurrent callers (per slot on a cluster): see {@link #complete(List)}. */
    String complete(Completion completion) {
        Combiner<Completion> combiner = cluster
                ? completionsBySlot.computeIfAbsent(KeyLayout.slot(completion.key()), s -> completionCombiner())
                : completions;
        return Failures.await("complete an inbox key", combiner.submit(completion));
    }

    /** {@link InboxScripts#CLAIM} for each key with its in-progress value: "" when claimed, else the value there. */
    List<String> claim(List<String> keys, List<String> values) {
        return Failures.await("claim inbox keys", claimAsync(keys, values));
    }

    /** {@link InboxScripts#COMPLETE} for each completion: OK, LOST, V:value there, WRONGTYPE/NOTINT/OVERFLOW/PARTIAL i. */
    List<String> complete(List<Completion> completions) {
        return Failures.await("complete inbox keys", completeAsync(completions));
    }

    private CompletableFuture<List<String>> claimAsync(List<String> keys, List<String> values) {
        String lease = Long.toString(settings.leaseTtl().toMillis());
        return run(InboxScripts.CLAIM, keys, group -> {
            List<Object> ks = new ArrayList<>(group.size());
            List<Object> args = new ArrayList<>(group.size() + 1);
            args.add(lease);
            for (int i : group) {
                ks.add(keys.get(i));
                args.add(values.get(i));
            }
            return new Call(keys.get(group.get(0)), ks, args);
        });
    }

    private CompletableFuture<List<String>> completeAsync(List<Completion> completions) {
        String retention = Long.toString(settings.retentionTtl().toMillis());
        List<String> keys = completions.stream().map(Completion::key).toList();
        return run(InboxScripts.COMPLETE, keys, group -> {
            List<Object> ks = new ArrayList<>();
            List<Object> args = new ArrayList<>();
            args.add(retention);
            for (int i : group) {
                Completion c = completions.get(i);
                ks.add(c.key());
                args.add(c.expected());
                args.add(c.done());
                args.add(Integer.toString(c.staged().size()));
                for (RedisUnitOfWork.Staged s : c.staged()) {
                    ks.add(s.key());
                    args.add(s.op());
                    args.add(s.a());
                    args.add(s.b());
                }
            }
            return new Call(keys.get(group.get(0)), ks, args);
        });
    }

    /** Deletes {@code key} only if it still holds {@code mine}; true when deleted. */
    boolean release(String key, String mine) {
        Long deleted = Failures.call("release an inbox claim", () -> script.eval(key, RScript.Mode.READ_WRITE,
                InboxScripts.RELEASE, RScript.ReturnType.LONG, List.of(key), mine));
        return deleted != null && deleted == 1L;
    }

    private CompletableFuture<List<String>> run(String lua, List<String> keys, Function<List<Integer>, Call> build) {
        if (keys.isEmpty()) {
            return CompletableFuture.completedFuture(List.of());
        }
        List<List<Integer>> groups = groups(keys, cluster);
        List<Call> calls = groups.stream().map(build).toList();
        CompletableFuture<List<?>> responses;
        if (calls.size() == 1) {
            Call c = calls.get(0);
            responses = script.<Object>evalAsync(c.routingKey(), RScript.Mode.READ_WRITE, lua, RScript.ReturnType.LIST,
                    c.keys(), c.args().toArray()).toCompletableFuture().thenApply(List::of);
        } else {
            RBatch batch = client.createBatch(BatchOptions.defaults());
            for (Call c : calls) {
                batch.getScript(StringCodec.INSTANCE).evalAsync(c.routingKey(), RScript.Mode.READ_WRITE, lua,
                        RScript.ReturnType.LIST, c.keys(), c.args().toArray());
            }
            responses = batch.executeAsync().toCompletableFuture().thenApply(r -> r.getResponses());
        }
        return responses.thenApply(answers -> {
            String[] results = new String[keys.size()];
            for (int g = 0; g < groups.size(); g++) {
                List<?> answer = (List<?>) answers.get(g);
                List<Integer> group = groups.get(g);
                if (answer == null || answer.size() != group.size()) {
                    throw new IllegalStateException("Redis answered " + (answer == null ? "nothing" : answer.size()
                            + " results") + " to a script call for " + group.size() + " keys");
                }
                for (int j = 0; j < group.size(); j++) {
                    results[group.get(j)] = String.valueOf(answer.get(j));
                }
            }
            return Arrays.asList(results);
        });
    }

    /**
     * Indices of {@code keys} grouped by slot (cluster) or all together (single server), in groups of at most
     * {@link #MAX_KEYS_PER_CALL}; every index exactly once, ascending within a group.
     */
    static List<List<Integer>> groups(List<String> keys, boolean cluster) {
        Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
        for (int i = 0; i < keys.size(); i++) {
            bySlot.computeIfAbsent(cluster ? KeyLayout.slot(keys.get(i)) : 0, s -> new ArrayList<>()).add(i);
        }
        List<List<Integer>> groups = new ArrayList<>();
        for (List<Integer> slot : bySlot.values()) {
            for (int from = 0; from < slot.size(); from += MAX_KEYS_PER_CALL) {
                groups.add(slot.subList(from, Math.min(slot.size(), from + MAX_KEYS_PER_CALL)));
            }
        }
        return groups;
    }
}
