package dev.idemkit.domain.deadletter;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The dead letters of one queue that failed the same way: one {@link FailureShape}, how many, since when and until when,
 * which (their ids, in queue order, oldest first) and one reason as it was written (the first member's).
 *
 * <p>{@code firstSeen} is the earliest moment a member's age counts from ({@link RedriveWindow#since}: its first
 * failed attempt), so the group's first sighting is when the failure first hit a message, as the console's ages are
 * counted; {@code lastSeen} is the latest a member was dead-lettered, the last time the failure gave a message up.
 * Every member's first attempt precedes its dead-lettering, so {@code firstSeen} never follows {@code lastSeen}.
 */
public record FailureGroup(FailureShape shape, int count, Instant firstSeen, Instant lastSeen, List<String> deadLetterIds,
        String exampleReason) {
    /** Largest first; among equals, the one seen first first (the older failure), then by shape. */
    public static final Comparator<FailureGroup> LARGEST_FIRST = Comparator.comparingInt(FailureGroup::count).reversed()
            .thenComparing(FailureGroup::firstSeen).thenComparing(g -> g.shape().text());

    public FailureGroup {
        Objects.requireNonNull(shape, "shape");
        Objects.requireNonNull(firstSeen, "firstSeen");
        Objects.requireNonNull(lastSeen, "lastSeen");
        Objects.requireNonNull(exampleReason, "exampleReason");
        deadLetterIds = List.copyOf(deadLetterIds);
        if (count < 1 || count != deadLetterIds.size()) {
            throw new IllegalArgumentException("a failure group counts its dead letters (at least one), got count "
                    + count + " for " + deadLetterIds.size() + " ids");
        }
        if (firstSeen.isAfter(lastSeen)) {
            throw new IllegalArgumentException("a failure group is first seen (" + firstSeen + ") before it is last"
                    + " seen (" + lastSeen + ")");
        }
    }

    /** A dead letter under the id its queue holds it by. */
    public record Member(String id, DeadLetter deadLetter) {
        public Member {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(deadLetter, "deadLetter");
        }
    }

    /**
     * The members grouped by the shape of their reasons, largest group first ({@link #LARGEST_FIRST}); within a group
     * the ids keep the members' order.
     */
    public static List<FailureGroup> of(List<Member> members) {
        Map<FailureShape, List<Member>> byShape = new LinkedHashMap<>();
        for (Member m : members) {
            byShape.computeIfAbsent(FailureShape.of(m.deadLetter().reason()), s -> new ArrayList<>()).add(m);
        }
        List<FailureGroup> groups = new ArrayList<>(byShape.size());
        byShape.forEach((shape, in) -> {
            Instant first = Instant.MAX;
            Instant last = Instant.MIN;
            for (Member m : in) {
                Instant since = RedriveWindow.since(m.deadLetter());
                first = since.isBefore(first) ? since : first;
                last = m.deadLetter().deadLetteredAt().isAfter(last) ? m.deadLetter().deadLetteredAt() : last;
            }
            groups.add(new FailureGroup(shape, in.size(), first, last, in.stream().map(Member::id).toList(),
                    in.get(0).deadLetter().reason()));
        });
        groups.sort(LARGEST_FIRST);
        return List.copyOf(groups);
    }
}
