package dev.idemkit.adapters.redis;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.Inbox;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.EffectFailedException;
import dev.idemkit.ports.out.Guarantee;
import dev.idemkit.ports.out.Guarded;
import dev.idemkit.ports.out.InboxStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The inbox on Redis. Atomic step: the claim script ({@link InboxScripts#CLAIM}, {@code SET NX PX lease}) —
 * never a read followed by a separate write. Then the effect runs, then one completion script checks that the
 * claim is still ours, applies the writes the effect staged in its {@link RedisUnitOfWork} and marks the key
 * completed for the retention TTL. A failing effect releases its claim (only if still ours).
 *
 * <p>A key claimed by another live delivery is not a duplicate yet: the call polls it for a bounded time
 * ({@link RedisSettings#claimWait()}) and then decides on the completed key, or claims a released or expired one,
 * or gives up with {@link ClaimHeldException} (retryable), never acknowledging a duplicate early.
 * A holder that crashed leaves a claim that expires after the lease; a completed key is never taken over before
 * its retention TTL. Guarantees: {@link #guarantee()} for effects staged in the unit of work,
 * {@link #externalEffectGuarantee()} for effects anywhere else. Thread-safe.
 */
public final class RedisInboxStore implements InboxStore<RedisUnitOfWork> {
    private static final Logger LOG = LoggerFactory.getLogger(RedisInboxStore.class);

    private final RScript script;
    private final RedissonClient client;
    private final RedisSettings settings;
    private final KeyLayout layout;

    public RedisInboxStore(RedissonClient client, RedisSettings settings) {
        this.client = Objects.requireNonNull(client, "client");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.script = client.getScript(StringCodec.INSTANCE);
        this.layout = new KeyLayout(settings.keyPrefix(), settings.hashTagScope());
    }

    @Override
    public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint, Effect<? super RedisUnitOfWork, R> effect) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(effect, "effect");
        String redisKey = layout.inbox(key);
        String mine = "P:" + token() + ":" + fingerprint.hex();
        Optional<Outcome> settled = claim(key, redisKey, mine, fingerprint);
        if (settled.isPresent()) {
            return Guarded.of(settled.get());
        }
        RedisUnitOfWork work = new RedisUnitOfWork(layout, redisKey, settings.topology() == RedisSettings.Topology.CLUSTER);
        R value;
        try {
            value = effect.run(work);
        } catch (Throwable t) {
            work.close();
            release(key, redisKey, mine, t);
            throw EffectFailedException.propagate(t);
        }
        work.close();
        complete(key, redisKey, mine, fingerprint, work.staged());
        return Guarded.processed(value);
    }

    /**
     * Empty when this caller now holds the claim; the decided outcome once the key is completed. A key held by
     * another live delivery is polled with backoff (1 ms doubling to 50 ms) for up to the claim wait: it
     * completes (a duplicate, or a reuse), is released (we claim it) or expires (we claim it); past the wait,
     * {@link ClaimHeldException}. Never reports a duplicate before the first delivery has completed.
     */
    Optional<Outcome> claim(InboxKey key, String redisKey, String mine, Fingerprint fingerprint) {
        long deadline = System.nanoTime() + settings.claimWait().toNanos();
        long pause = 1;
        while (true) {
            String existing = Failures.call("claim an inbox key", () -> script.eval(redisKey,
                    RScript.Mode.READ_WRITE, InboxScripts.CLAIM, RScript.ReturnType.VALUE, List.of(redisKey), mine,
                    Long.toString(settings.leaseTtl().toMillis())));
            if (existing == null) {
                return Optional.empty();
            }
            if (existing.startsWith("C:")) {
                Outcome outcome = Inbox.decide(Optional.of(new Fingerprint(existing.substring(2))), fingerprint);
                LOG.debug("inbox decision={} consumer={} message_id={}", outcome, key.consumer(), key.messageId());
                return Optional.of(outcome);
            }
            if (System.nanoTime() + pause * 1_000_000 > deadline) {
                LOG.debug("inbox decision=held consumer={} message_id={}", key.consumer(), key.messageId());
                throw new ClaimHeldException("message " + key.messageId() + " of consumer " + key.consumer()
                        + " is being processed by another delivery (waited " + settings.claimWait()
                        + "); not a duplicate yet: retry later");
            }
            sleep(pause);
            pause = Math.min(50, pause * 2);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ClaimHeldException("interrupted while waiting for another delivery of the same message");
        }
    }

    void complete(InboxKey key, String redisKey, String mine, Fingerprint fingerprint,
            List<RedisUnitOfWork.Staged> staged) {
        List<Object> keys = new ArrayList<>(staged.size() + 1);
        List<Object> args = new ArrayList<>(3 + 3 * staged.size());
        keys.add(redisKey);
        args.add(mine);
        args.add("C:" + fingerprint.hex());
        args.add(Long.toString(settings.retentionTtl().toMillis()));
        for (RedisUnitOfWork.Staged s : staged) {
            keys.add(s.key());
            args.add(s.op());
            args.add(s.a());
            args.add(s.b());
        }
        String result = Failures.call("complete an inbox key", () -> script.eval(redisKey, RScript.Mode.READ_WRITE,
                InboxScripts.COMPLETE, RScript.ReturnType.VALUE, keys, args.toArray()));
        if ("OK".equals(result)) {
            LOG.debug("inbox decision=processed consumer={} message_id={} staged_writes={}", key.consumer(),
                    key.messageId(), staged.size());
            return;
        }
        if ("LOST".equals(result)) {
            LOG.warn("inbox decision=claim-lost consumer={} message_id={} lease={}", key.consumer(), key.messageId(),
                    settings.leaseTtl());
            throw new ClaimLostException("the claim on message " + key.messageId() + " of consumer " + key.consumer()
                    + " expired before the effect completed (lease " + settings.leaseTtl()
                    + "); nothing was written; retry");
        }
        IllegalStateException failure = new IllegalStateException(describe(result, staged));
        release(key, redisKey, mine, failure);
        throw failure;
    }

    private static String describe(String result, List<RedisUnitOfWork.Staged> staged) {
        String[] parts = String.valueOf(result).split(" ");
        if (parts.length == 2) {
            RedisUnitOfWork.Staged s = staged.get(Integer.parseInt(parts[1]) - 1);
            return "staged " + s.op() + " on " + s.key() + " cannot apply (" + parts[0]
                    + "); nothing was written and the claim was released";
        }
        return "unexpected completion result " + result;
    }

    void release(InboxKey key, String redisKey, String mine, Throwable cause) {
        try {
            Failures.call("release an inbox claim", () -> script.eval(redisKey, RScript.Mode.READ_WRITE,
                    InboxScripts.RELEASE, RScript.ReturnType.LONG, List.of(redisKey), mine));
            LOG.debug("inbox decision=released consumer={} message_id={}", key.consumer(), key.messageId());
        } catch (RuntimeException e) {
            cause.addSuppressed(e);
            LOG.warn("inbox decision=release-failed consumer={} message_id={}: the claim expires after its lease {}",
                    key.consumer(), key.messageId(), settings.leaseTtl());
        }
    }

    @Override
    public Optional<Fingerprint> recorded(InboxKey key) {
        String redisKey = layout.inbox(Objects.requireNonNull(key, "key"));
        String value = Failures.call("read an inbox key",
                () -> client.<String>getBucket(redisKey, StringCodec.INSTANCE).get());
        return value != null && value.startsWith("C:") ? Optional.of(new Fingerprint(value.substring(2)))
                : Optional.empty();
    }

    /** {@link Guarantee#EXACTLY_ONCE_WITHIN_STORE_DURABILITY}: for effects written through the {@link RedisUnitOfWork}. */
    @Override
    public Guarantee guarantee() {
        return Guarantee.EXACTLY_ONCE_WITHIN_STORE_DURABILITY;
    }

    /**
     * {@link Guarantee#DUPLICATES_REDUCED}: an effect outside Redis runs between claim and completion; a crash (or
     * a lease expiring) between the two runs it again.
     */
    public Guarantee externalEffectGuarantee() {
        return Guarantee.DUPLICATES_REDUCED;
    }

    KeyLayout layout() {
        return layout;
    }

    RedisSettings settings() {
        return settings;
    }

    static String token() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        return Long.toHexString(r.nextLong() | Long.MIN_VALUE) + Long.toHexString(r.nextLong() | Long.MIN_VALUE);
    }
}
