package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.JoinedUnitOfWork;
import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.Effect;
import dev.idemkit.ports.out.Guarantee;
import dev.idemkit.ports.out.Guarded;
import dev.idemkit.ports.out.InboxStore;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** What the Spring crash children and their harnesses share: the deliberately broken inbox the harnesses must catch, and the kill. */
final class CrashChildren {
    private CrashChildren() {}

    /**
     * Runs the key and effect on another thread and reports them processed at once, before anything committed: the
     * listener returns, and its container acknowledges (or commits the offset), while the effect is still running.
     */
    static InboxStore<JoinedUnitOfWork> asyncCommit(ListenerInbox inbox) {
        ExecutorService committer = Executors.newCachedThreadPool();
        return new InboxStore<>() {
            @Override
            public <R> Guarded<R> runOnce(InboxKey key, Fingerprint fingerprint,
                    Effect<? super JoinedUnitOfWork, R> effect) {
                committer.submit(() -> inbox.runOnce(key, fingerprint, effect));
                return Guarded.processed(null); // reported processed before anything committed: the bug
            }

            @Override
            public Optional<Fingerprint> recorded(InboxKey key) {
                return inbox.recorded(key);
            }

            @Override
            public Guarantee guarantee() {
                return inbox.guarantee();
            }
        };
    }

    /** Waits until the child stopped at {@code point} (its {@code CRASH-POINT} line) and SIGKILLs it. */
    static void killWhenStopped(dev.idemkit.testsupport.ChildJvm child, String point, int hit,
            java.time.Duration patience) throws Exception {
        String line = child.awaitLine("CRASH-POINT " + point, patience).orElseThrow(() -> new AssertionError(
                "the service never reached " + point + " (hit " + hit + "); log: " + child.log()));
        org.assertj.core.api.Assertions.assertThat(line).isEqualTo("CRASH-POINT " + point);
        org.assertj.core.api.Assertions.assertThat(child.kill()).as("killed by SIGKILL")
                .isEqualTo(dev.idemkit.testsupport.ChildJvm.SIGKILLED);
    }
}
