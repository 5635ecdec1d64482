package dev.idemkit.ports.in;

import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.ports.in.DeadLetters.RedriveResult;
import dev.idemkit.ports.out.RedriveAudit;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * The operator's redrive, one use case whoever asks (the console, the command line): dead letters back to their
 * queue with an approval, or a dry run of it; one redrive per queue at a time, at a rate that holds across queues,
 * audited as it goes, stopped at the first failure.
 */
public interface Redrives {

    /**
     * A redrive (or a dry run) of {@code ids} of {@code queue}'s dead-letter queue, asked by {@code operator} (the
     * console's operator key, or the command line's user) with {@code approval}; {@code pastWindow}, a second approval by
     * another person, also lets through dead letters older than the dedup window.
     */
    record Command(String queue, List<String> ids, String operator, Approval approval, Optional<Approval> pastWindow,
            boolean dryRun) {
        public Command {
            Objects.requireNonNull(queue, "queue");
            ids = List.copyOf(new java.util.LinkedHashSet<>(ids)); // an id given twice is redriven once
            if (ids.isEmpty()) {
                throw new IllegalArgumentException("a redrive names at least one dead letter");
            }
            Objects.requireNonNull(operator, "operator");
            Objects.requireNonNull(approval, "approval");
            Objects.requireNonNull(pastWindow, "pastWindow");
        }
    }

    /**
     * What a redrive did: the audit entry it was recorded under (empty when none of the ids was in the dead-letter
     * queue: nothing to do, nothing recorded), one result per dead letter attempted, in order; when it stopped at a
     * failure, why, and the ids not attempted (still in the dead-letter queue: the same command again resumes).
     */
    record Outcome(OptionalLong auditId, List<RedriveResult> results, Optional<String> failure,
            List<String> notAttempted) {
        public Outcome {
            results = List.copyOf(results);
            notAttempted = List.copyOf(notAttempted);
        }

        /** None of the ids was in the dead-letter queue. */
        public boolean nothingFound() {
            return auditId.isEmpty();
        }
    }

    /**
     * What a redrive tells its caller as it goes, and asks it between two dead letters (the console runs a redrive as a
     * job: it shows the progress and stops the job at shutdown). Called on the redrive's thread; {@link #NONE} hears
     * nothing and never stops.
     */
    interface Progress {
        Progress NONE = new Progress() { };

        /** The redrive is recorded under audit entry {@code auditId} and is about to move or plan {@code ids}. */
        default void began(long auditId, int ids) {
        }

        /** One dead letter's result, as it is done (and audited). */
        default void done(RedriveResult result) {
        }

        /**
         * Asked before each dead letter of a real redrive: true stops it there, as a failure ("stopped"), with the
         * rest not attempted (still in the dead-letter queue: the same command again resumes). Never asked while a
         * dead letter is being moved.
         */
        default boolean stopRequested() {
            return false;
        }
    }

    /**
     * Runs {@code command}, on the caller's thread, until it is done, failed or stopped.
     *
     * @throws java.util.NoSuchElementException for a queue this operation does not serve
     * @throws IllegalArgumentException for a past-window approval by the same person as the first
     */
    Outcome redrive(Command command, Progress progress);

    /** {@link #redrive(Command, Progress)} with {@link Progress#NONE}. */
    default Outcome redrive(Command command) {
        return redrive(command, Progress.NONE);
    }

    /** The queues whose dead letters it redrives. */
    Set<String> queues();

    /** The newest {@code max} recorded redrives and dry runs, newest first. */
    List<RedriveAudit.Entry> audit(int max);
}
