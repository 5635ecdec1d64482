package dev.idemkit.ports.contract;

import static org.quicktheories.generators.SourceDSL.lists;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * The contract suites' generators. Schedules are small (at most 12 steps) so that a property of 1000
 * examples stays fast against a real server. Names that must be unique per example are not generated
 * here: the suites draw them with {@link #fresh} inside each example, so shrinking reruns stay isolated.
 */
public final class ContractGenerators {
    /** The longest schedule any property runs. */
    public static final int MAX_STEPS = 12;

    private ContractGenerators() {}

    /**
     * Examples per property of the store contract suites: the system property {@code idemkit.examples}, 1000 when it
     * is not set. The one setting of the build: the in-memory references always run 1000; against the real engines
     * the README's test command runs fewer and the full tier 1000, and the root pom says why next to the number.
     */
    public static int examples() {
        int n = Integer.getInteger("idemkit.examples", 1000);
        if (n < 1) {
            throw new IllegalArgumentException("idemkit.examples must be at least 1, got " + n);
        }
        return n;
    }

    /** A name nobody used before, for per-test and per-example isolation. */
    public static String fresh(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    /** One inbox delivery: which message (1..4), which body (0, or 1 for a producer reusing the id), and whether the effect fails. */
    public record InboxStep(int id, int variant, boolean fails) {
        public String messageId() {
            return "m-" + id;
        }

        public String body() {
            return "payload-" + id + "-" + variant;
        }

        /** The effect's amount, a function of the body, so a redelivery adds the same amount. */
        public long amount() {
            return id * 10L + variant;
        }
    }

    /** One versioned event: aggregate (1..3), version (0..6), value variant, and whether onApplied fails. */
    public record VersionedStep(int aggregate, long version, int variant, boolean fails) {
        public long value() {
            return version * 100 + variant;
        }
    }

    /** One upsert: natural key (1..4), value variant, and whether onInserted fails. */
    public record UpsertStep(int key, int variant, boolean fails) {
        public String value() {
            return "value-" + key + "-" + variant;
        }
    }

    /** One operation on Idempotency-Key records: which of 4 scoped keys, a request variant (0..3) and seconds (10..50). */
    public record RecordOp(Kind kind, int key, int variant, int seconds) {
        public enum Kind { BEGIN, COMPLETE, RELEASE, FIND, ADVANCE, PURGE }
    }

    /** Messages 1..n, and the same messages with repeats inserted at random places. */
    public record Schedule(List<Integer> distinct, List<Integer> withDuplicates) {}

    public static Gen<List<InboxStep>> inboxSchedules() {
        return lists().of(Generate.range(1, 4).zip(variants(), failures(), InboxStep::new)).ofSizeBetween(1, MAX_STEPS);
    }

    public static Gen<List<VersionedStep>> versionedSchedules() {
        Gen<VersionedStep> step = Generate.range(1, 3).zip(Generate.longRange(0, 6), variants(), failures(),
                VersionedStep::new);
        return lists().of(step).ofSizeBetween(1, MAX_STEPS);
    }

    /** Versioned events whose value is a function of the version, none failing: reordered and repeated. */
    public static Gen<List<VersionedStep>> versionedReorderings() {
        Gen<VersionedStep> step = Generate.range(1, 3).zip(Generate.longRange(0, 6),
                (aggregate, version) -> new VersionedStep(aggregate, version, 0, false));
        return lists().of(step).ofSizeBetween(1, MAX_STEPS);
    }

    public static Gen<List<UpsertStep>> upsertSchedules() {
        return lists().of(Generate.range(1, 4).zip(variants(), failures(), UpsertStep::new)).ofSizeBetween(1, MAX_STEPS);
    }

    /** Up to 12 operations: begins and completes most often, time passing often enough for records to expire. */
    public static Gen<List<RecordOp>> recordHistories() {
        RecordOp.Kind[] byWeight = {RecordOp.Kind.BEGIN, RecordOp.Kind.BEGIN, RecordOp.Kind.BEGIN, RecordOp.Kind.COMPLETE,
            RecordOp.Kind.COMPLETE, RecordOp.Kind.RELEASE, RecordOp.Kind.FIND, RecordOp.Kind.ADVANCE,
            RecordOp.Kind.ADVANCE, RecordOp.Kind.PURGE};
        Gen<RecordOp> op = Generate.range(0, byWeight.length - 1).zip(Generate.range(0, 3), Generate.range(0, 3),
                Generate.range(1, 5), (kind, key, variant, tens) -> new RecordOp(byWeight[kind], key, variant, tens * 10));
        return lists().of(op).ofSizeBetween(1, MAX_STEPS);
    }

    /** 1..6 distinct messages and 0..6 repeats inserted among them (so at most 12 deliveries). */
    public static Gen<Schedule> duplicateSchedules() {
        Gen<int[]> repeat = Generate.range(0, 99).zip(Generate.range(0, 99), (at, which) -> new int[] {at, which});
        return Generate.range(1, 6).zip(lists().of(repeat).ofSizeBetween(0, 6), ContractGenerators::schedule);
    }

    private static Schedule schedule(int n, List<int[]> repeats) {
        List<Integer> distinct = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            distinct.add(i);
        }
        List<Integer> all = new ArrayList<>(distinct);
        for (int[] r : repeats) {
            all.add(r[0] % (all.size() + 1), distinct.get(r[1] % n));
        }
        return new Schedule(List.copyOf(distinct), List.copyOf(all));
    }

    /** Mostly 0; 1 in 8 is another body (value) under the same key. */
    static Gen<Integer> variants() {
        return Generate.range(0, 7).map(n -> n == 7 ? 1 : 0);
    }

    /** About 1 in 6 effects fail. */
    static Gen<Boolean> failures() {
        return Generate.range(0, 5).map(n -> n == 5);
    }
}
