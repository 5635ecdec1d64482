package dev.idemkit.adapters.redis;

import dev.idemkit.adapters.redis.InboxAnswers.KeyValue;
import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.Inbox;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.EffectFailedException;
import dev.idemkit.ports.out.Guarantee;
import dev.idemkit.ports.out.Guarded;
import dev.idemkit.ports.out.InboxStore;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The inbox on Redis. Atomic step: the claim script ({@link InboxScripts#CLAIM}, absent key -> {@code SET PX lease}) —
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

    private final InboxCommands commands;
    private final RedissonClient client;
    private final RedisSettings settings;
    private final KeyLayout layout;

    public RedisInboxStore(RedissonClient client, RedisSettings settings) {
        this.client = Objects.requireNonNull(client, "client");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.commands = new InboxCommands(client, settings);
        this.layout = new KeyLayout(settings.keyPrefix(), settings.hashTagScope());
    }

    @Override
    public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint, Effect<? super RedisUnitOfWork, R> effect) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(effect, "effect");
        String redisKey = layout.inbox(key);
        String mine = InboxAnswers.claimValue(fingerprint);
        Optional<Outcome> settled = claim(key, redisKey, mine, fingerprint);
        if (settled.isPresent()) {
            return Guarded.of(settled.get());
        }
        RedisUnitOfWork work = newWork(redisKey);
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
     * The inbox in ONE round trip, for an effect whose every write is staged in its {@link RedisUnitOfWork} (a
     * balance, a reservation kept in Redis). The effect runs first, before anything is sent; then one script
     * applies its staged writes and marks the key completed, only if the key is absent; a present key is decided
     * exactly as {@link #runOnce} decides it (duplicate, reused id, or a live claim waited for up to the claim
     * wait) and the staged writes are dropped.
     *
     * <p>So the effect also runs for a duplicate (its value and writes are then discarded; when it throws, the key
     * is read and a completed key is still decided as a duplicate): it must not do anything outside its unit of work — no HTTP call, no other database, no message. For such effects use
     * {@link #runOnce}, which claims first. Same guarantee as {@link #guarantee()}: the writes and the key commit
     * together or not at all. A staged write that cannot apply (wrong type, non-integer counter) fails the call
     * with {@link IllegalStateException} and writes nothing, not even the key.
     */
    public <R> Guarded<R> runOnceStaged(InboxKey key, Fingerprint fingerprint, Effect<? super RedisUnitOfWork, R> effect) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(effect, "effect");
        String redisKey = layout.inbox(key);
        RedisUnitOfWork work = newWork(redisKey);
        R value;
        try {
            value = effect.run(work);
        } catch (Throwable t) {
            // a duplicate is decided as a duplicate even when the effect would now fail (say, a balance check
            // failing because the first delivery was applied): only a key not completed gets the failure
            Optional<Outcome> decided = decidedAfterFailure(key, fingerprint, t);
            if (decided.isPresent()) {
                return Guarded.of(decided.get());
            }
            throw EffectFailedException.propagate(t);
        } finally {
            work.close();
        }
        InboxCommands.Completion completion = new InboxCommands.Completion(redisKey, "", InboxAnswers.completed(fingerprint),
                work.staged());
        Optional<Outcome> outcome = decideWaiting(key, fingerprint, () -> {
            InboxAnswers.CompletionAnswer answer = InboxAnswers.CompletionAnswer.of(commands.complete(completion));
            if (answer instanceof InboxAnswers.CompletionAnswer.Applied) {
                return new KeyValue.Ours();
            }
            if (answer instanceof InboxAnswers.CompletionAnswer.Found found) {
                return KeyValue.of(found.value(), null);
            }
            throw InboxAnswers.completionFailure(key, answer.text(), work.staged(), false);
        });
        if (outcome.isPresent()) {
            return Guarded.of(outcome.get());
        }
        LOG.debug("inbox decision=processed consumer={} message_id={} staged_writes={} round_trips=1", key.consumer(),
                key.messageId(), work.staged().size());
        return Guarded.processed(value);
    }

    /**
     * This store as an {@link InboxStore} whose {@code runOnce} is {@link #runOnceStaged}: for wiring a consumer
     * whose effects all live in Redis (written through the unit of work) into code that takes the port, at one
     * round trip per delivery. Same keys, same decisions: both views can serve one consumer side by side. The
     * port's "exactly one caller runs the effect" holds for what the effect writes (the writes of a duplicate are
     * dropped); the effect function itself is also called for duplicates, so it must not act outside its unit.
     */
    public InboxStore<RedisUnitOfWork> stagedOnly() {
        RedisInboxStore store = this;
        return new InboxStore<>() {
            @Override
            public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint, Effect<? super RedisUnitOfWork, R> effect) {
                return store.runOnceStaged(key, fingerprint, effect);
            }

            @Override
            public Optional<Fingerprint> recorded(InboxKey key) {
                return store.recorded(key);
            }

            @Override
            public Guarantee guarantee() {
                return store.guarantee();
            }

            @Override
            public String toString() {
                return "RedisInboxStore.stagedOnly(prefix " + store.settings.keyPrefix() + ")";
            }
        };
    }

    /** The outcome when {@code key} is completed; empty (and {@code failure} to be thrown) otherwise. */
    Optional<Outcome> decidedAfterFailure(InboxKey key, Fingerprint fingerprint, Throwable failure) {
        try {
            return recorded(key).map(done -> Inbox.decide(Optional.of(done), fingerprint));
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
            return Optional.empty();
        }
    }

    RedisUnitOfWork newWork(String redisKey) {
        return new RedisUnitOfWork(layout, redisKey, settings.topology() == RedisSettings.Topology.CLUSTER);
    }

    /**
     * Empty when this caller now holds the claim; the decided outcome once the key is completed. A key held by
     * another live delivery is polled with backoff (1 ms doubling to 50 ms) for up to the claim wait: it
     * completes (a duplicate, or a reuse), is released (we claim it) or expires (we claim it); past the wait,
     * {@link ClaimHeldException}. Never reports a duplicate before the first delivery has completed.
     */
    Optional<Outcome> claim(InboxKey key, String redisKey, String mine, Fingerprint fingerprint) {
        // our own value back: a script that ran but whose answer was lost, and was sent again
        return decideWaiting(key, fingerprint, () -> KeyValue.of(commands.claim(redisKey, mine), mine));
    }

    /**
     * Runs {@code attempt} until the key is ours (empty) or completed (its outcome); a live claim of another delivery
     * is polled with backoff for up to the claim wait.
     */
    private Optional<Outcome> decideWaiting(InboxKey key, Fingerprint fingerprint, Supplier<KeyValue> attempt) {
        long deadline = System.nanoTime() + settings.claimWait().toNanos();
        long pause = 1;
        while (true) {
            KeyValue existing = attempt.get();
            if (existing instanceof KeyValue.Ours) {
                return Optional.empty();
            }
            Optional<Outcome> settled = InboxAnswers.settled(key, fingerprint, existing);
            if (settled.isPresent()) {
                LOG.debug("inbox decision={} consumer={} message_id={}", settled.get(), key.consumer(), key.messageId());
                return settled;
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
        InboxAnswers.CompletionAnswer answer = InboxAnswers.CompletionAnswer.of(commands.complete(
                new InboxCommands.Completion(redisKey, mine, InboxAnswers.completed(fingerprint), staged)));
        if (answer instanceof InboxAnswers.CompletionAnswer.Applied) {
            LOG.debug("inbox decision=processed consumer={} message_id={} staged_writes={}", key.consumer(),
                    key.messageId(), staged.size());
            return;
        }
        if (answer instanceof InboxAnswers.CompletionAnswer.Lost) {
            LOG.warn("inbox decision=claim-lost consumer={} message_id={} lease={}", key.consumer(), key.messageId(),
                    settings.leaseTtl());
            throw InboxAnswers.lost(key, settings.leaseTtl());
        }
        String result = answer.text();
        RuntimeException failure = InboxAnswers.completionFailure(key, result, staged, true);
        if (InboxAnswers.releasable(result)) {
            release(key, redisKey, mine, failure);
        }
        throw failure;
    }

    void release(InboxKey key, String redisKey, String mine, Throwable cause) {
        try {
            commands.release(redisKey, mine);
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
        return KeyValue.of(value, null) instanceof KeyValue.Completed completed ? Optional.of(completed.fingerprint())
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

    InboxCommands commands() {
        return commands;
    }

    RedisSettings settings() {
        return settings;
    }

}
