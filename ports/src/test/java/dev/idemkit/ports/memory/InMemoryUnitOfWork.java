package dev.idemkit.ports.memory;

import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.EffectFailedException;
import dev.idemkit.ports.out.UnitOfWork;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The in-memory stores' unit of work: an effect stages its writes with {@link #onCommit}; they are
 * applied only when the store commits, after the effect returned. An effect that throws leaves nothing
 * behind. Belongs to the one thread that runs the effect; not thread-safe.
 */
public final class InMemoryUnitOfWork implements UnitOfWork {
    private final List<Runnable> staged = new ArrayList<>();
    private boolean finished;

    private InMemoryUnitOfWork() {}

    /** Stages {@code action}; it runs only if the unit of work commits. */
    public void onCommit(Runnable action) {
        if (finished) {
            throw new IllegalStateException("this unit of work has already committed or rolled back");
        }
        staged.add(Objects.requireNonNull(action, "action"));
    }

    /**
     * Runs {@code effect} in a new unit of work. When it returns, commits: runs {@code record} (the
     * store's own write, e.g. the inbox key), then every staged action. When it throws, rolls back:
     * nothing runs, and the exception is rethrown (a checked one wrapped in {@link EffectFailedException}).
     * The caller holds its store's lock, which makes the decision, the record and the staged writes one step.
     */
    public static <R> R transact(Effect<? super InMemoryUnitOfWork, R> effect, Runnable record) {
        InMemoryUnitOfWork work = new InMemoryUnitOfWork();
        R result;
        try {
            result = effect.run(work);
        } catch (Throwable t) {
            work.finished = true;
            work.staged.clear();
            throw EffectFailedException.propagate(t);
        }
        work.finished = true;
        record.run();
        work.staged.forEach(Runnable::run);
        return result;
    }
}
