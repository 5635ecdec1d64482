package dev.idemkit.ports.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.Message;
import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.deadletter.DeadLetter;
import dev.idemkit.domain.deadletter.RedriveAction;
import dev.idemkit.domain.deadletter.RedriveRequest;
import dev.idemkit.ports.in.DeadLetters;
import dev.idemkit.ports.in.Redrives;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.DeadLetterEntry;
import dev.idemkit.ports.out.RedriveAudit;
import dev.idemkit.ports.out.RedriveEvents;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The redrive operation that the console and the command line share. */
class RedriveServiceTest {
    private static final Approval ANA = new Approval("ana", "bug fixed", Instant.parse("2026-12-03T10:00:00Z"));

    /** A dead-letter queue in memory: ids to entries; a redrive removes the entry and records who moved it. */
    static final class Queue implements DeadLetters {
        final Map<String, DeadLetterEntry> held = Collections.synchronizedMap(new LinkedHashMap<>());
        final List<String> moved = new CopyOnWriteArrayList<>();
        final List<Approval> approvals = new CopyOnWriteArrayList<>();
        volatile String failOn;

        Queue(String queue, String... ids) {
            for (String id : ids) {
                Message m = new Message("m-" + id, "x".getBytes(StandardCharsets.UTF_8), Map.of(), queue);
                held.put(id, new DeadLetterEntry(id, new DeadLetter(m, "broken", List.of(new AttemptRecord(1,
                        Instant.now(), "broken")), Instant.now())));
            }
        }

        @Override
        public long depth(String queue) {
            return held.size();
        }

        @Override
        public List<DeadLetterEntry> inspect(String queue, int max) {
            return new ArrayList<>(held.values());
        }

        @Override
        public Optional<DeadLetterEntry> show(String queue, String id) {
            return Optional.ofNullable(held.get(id));
        }

        @Override
        public FailureGroups groups(String queue, int max) {
            throw new UnsupportedOperationException("the redrive does not group");
        }

        @Override
        public Optional<Duration> oldestAge(String queue) {
            throw new UnsupportedOperationException("the redrive does not look at ages");
        }

        @Override
        public boolean checkDepth(String queue) {
            return false;
        }

        @Override
        public List<RedriveResult> redrive(String queue, RedriveRequest request) {
            List<RedriveResult> out = new ArrayList<>();
            for (String id : request.deadLetterIds()) {
                if (id.equals(failOn)) {
                    throw new IllegalStateException("broker unreachable");
                }
                boolean found = held.remove(id) != null;
                if (found) {
                    moved.add(id);
                    approvals.add(request.approval());
                }
                out.add(new RedriveResult(id, RedriveAction.REPUBLISH, found, Duration.ZERO, Duration.ofDays(4)));
            }
            return out;
        }

        @Override
        public List<RedriveResult> plan(String queue, RedriveRequest request) {
            return request.deadLetterIds().stream().map(id -> new RedriveResult(id, RedriveAction.REPUBLISH,
                    held.containsKey(id), Duration.ZERO, Duration.ofDays(4))).toList();
        }
    }

    private final RedriveAudit audit = RedriveAudit.inMemory(100);
    private final AtomicLong now = new AtomicLong();
    /** The instants (fake nanos) at which dead letters were moved, in order. */
    private final List<Long> movedAt = new CopyOnWriteArrayList<>();
    private final List<String> spans = new CopyOnWriteArrayList<>();

    private RedriveService service(Map<String, DeadLetters> queues, double perSecond) {
        RedriveEvents events = (queue, entry, approval) -> {
            movedAt.add(now.get());
            spans.add("start " + entry.id());
            return action -> spans.add("end " + entry.id() + " " + action);
        };
        return new RedriveService(queues, audit, Clock.system(), perSecond, events, now::get, now::addAndGet);
    }

    private static Redrives.Command command(String queue, String... ids) {
        return new Redrives.Command(queue, List.of(ids), "ana", ANA, Optional.empty(), false);
    }

    @Test
    void aRedriveIsAuditedAsItGoesAndEachDeadLetterIsObservedByTheHook() {
        Queue q = new Queue("orders", "a", "b");
        Redrives.Outcome outcome = service(Map.of("orders", q), 10).redrive(command("orders", "a", "b", "a"));
        assertThat(q.moved).containsExactly("a", "b");
        assertThat(outcome.failure()).isEmpty();
        assertThat(outcome.results()).extracting(DeadLetters.RedriveResult::deadLetterId).containsExactly("a", "b");
        RedriveAudit.Entry entry = audit.entries(10).get(0);
        assertThat(entry.id()).isEqualTo(outcome.auditId().getAsLong());
        assertThat(entry.state()).isEqualTo("done");
        assertThat(entry.operator()).isEqualTo("ana");
        assertThat(entry.results()).extracting(RedriveAudit.Result::deadLetterId).containsExactly("a", "b");
        assertThat(spans).containsExactly("start a", "end a REPUBLISH", "start b", "end b REPUBLISH");
    }

    @Test
    void itReportsEachResultAsItGoesAndAStopRequestEndsItBetweenTwoDeadLettersAsNotAttempted() {
        Queue q = new Queue("orders", "a", "b", "c");
        List<String> heard = new CopyOnWriteArrayList<>();
        Redrives.Outcome outcome = service(Map.of("orders", q), 10).redrive(command("orders", "a", "b", "c"),
                new Redrives.Progress() {
                    @Override
                    public void began(long auditId, int ids) {
                        heard.add("began " + auditId + " " + ids);
                    }

                    @Override
                    public void done(DeadLetters.RedriveResult result) {
                        heard.add("done " + result.deadLetterId());
                    }

                    @Override
                    public boolean stopRequested() {
                        return heard.size() == 3; // after a and b
                    }
                });
        assertThat(heard).containsExactly("began " + outcome.auditId().getAsLong() + " 3", "done a", "done b");
        assertThat(q.moved).containsExactly("a", "b");
        assertThat(outcome.failure()).hasValueSatisfying(f -> assertThat(f).contains("stopped on request"));
        assertThat(outcome.notAttempted()).containsExactly("c");
        assertThat(audit.entries(1).get(0)).satisfies(e -> {
            assertThat(e.state()).isEqualTo("failed");
            assertThat(e.results()).extracting(RedriveAudit.Result::deadLetterId).containsExactly("a", "b");
        });
    }

    @Test
    void theRateHoldsAcrossQueuesWithoutCatchingUp() {
        Queue orders = new Queue("orders", "a", "b", "c");
        Queue credits = new Queue("credits", "x", "y");
        RedriveService service = service(Map.of("orders", orders, "credits", credits), 10); // one per 100 ms
        service.redrive(command("orders", "a", "b", "c"));
        service.redrive(command("credits", "x", "y"));
        assertThat(movedAt).containsExactly(0L, 100_000_000L, 200_000_000L, 300_000_000L, 400_000_000L);
        now.addAndGet(5_000_000_000L); // a long pause: the next one goes at once, the one after waits its spacing
        orders.held.putAll(new Queue("orders", "d", "e").held);
        movedAt.clear();
        service.redrive(command("orders", "d", "e"));
        assertThat(movedAt).containsExactly(5_400_000_000L, 5_500_000_000L);
    }

    @Test
    void itStopsAtTheFirstFailureSayingWhatMovedAndWhatWasNotAttempted() {
        Queue q = new Queue("orders", "a", "b", "c");
        q.failOn = "b";
        Redrives.Outcome outcome = service(Map.of("orders", q), 100).redrive(command("orders", "a", "b", "c"));
        assertThat(q.moved).containsExactly("a");
        assertThat(outcome.failure()).hasValueSatisfying(f -> assertThat(f).contains("broker unreachable"));
        assertThat(outcome.notAttempted()).containsExactly("b", "c");
        assertThat(audit.entries(1).get(0)).satisfies(e -> {
            assertThat(e.state()).isEqualTo("failed");
            assertThat(e.results()).extracting(RedriveAudit.Result::deadLetterId).containsExactly("a");
        });
        assertThat(spans).containsExactly("start a", "end a REPUBLISH", "start b", "end b failed");
    }

    @Test
    void aDryRunMovesNothingAndIsAuditedAsOne() {
        Queue q = new Queue("orders", "a");
        Redrives.Outcome outcome = service(Map.of("orders", q), 100).redrive(new Redrives.Command("orders",
                List.of("a", "zz"), "ana", ANA, Optional.empty(), true));
        assertThat(q.moved).isEmpty();
        assertThat(outcome.results()).extracting(DeadLetters.RedriveResult::found).containsExactly(true, false);
        assertThat(audit.entries(1).get(0).dryRun()).isTrue();
    }

    @Test
    void idsNoneOfWhichIsThereRecordNothing() {
        Redrives.Outcome outcome = service(Map.of("orders", new Queue("orders")), 100).redrive(command("orders", "zz"));
        assertThat(outcome.nothingFound()).isTrue();
        assertThat(audit.entries(10)).isEmpty();
        assertThatThrownBy(() -> service(Map.of(), 100).redrive(command("nope", "a")))
                .isInstanceOf(NoSuchElementException.class);
    }

    @Test
    void anotherOperatorsRedriveRecordsBothOnTheMessageAndThePastWindowApprovalNeedsAnotherPerson() {
        Queue q = new Queue("orders", "a");
        service(Map.of("orders", q), 100).redrive(new Redrives.Command("orders", List.of("a"), "ops-bot", ANA,
                Optional.of(new Approval("bo", "keys still held", Instant.now())), false));
        assertThat(q.approvals).extracting(Approval::approvedBy).containsExactly("ana (operator ops-bot)");
        assertThat(audit.entries(1).get(0).approver()).as("the second approver is on record")
                .isEqualTo("ana; past the dedup window: bo (keys still held)");
        // through another operator's key, the same person twice is still the same person
        assertThatThrownBy(() -> service(Map.of("orders", new Queue("orders", "c")), 100).redrive(
                new Redrives.Command("orders", List.of("c"), "ops-bot", ANA, Optional.of(new Approval("ana", "again",
                        Instant.now())), false))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> service(Map.of("orders", new Queue("orders", "b")), 100).redrive(
                new Redrives.Command("orders", List.of("b"), "ana", ANA, Optional.of(new Approval("Ana ", "me again",
                        Instant.now())), false))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("second approval");
    }

    @Test
    void twoRedrivesOfOneQueueAtOnceMoveEachDeadLetterOnce() throws Exception {
        String[] ids = new String[50];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = "d" + i;
        }
        Queue q = new Queue("orders", ids);
        RedriveService service = new RedriveService(Map.of("orders", q), audit, Clock.system(), 10_000,
                RedriveEvents.none());
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Redrives.Outcome>> runs = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                runs.add(pool.submit(() -> {
                    go.await();
                    return service.redrive(command("orders", ids));
                }));
            }
            go.countDown();
            for (Future<Redrives.Outcome> r : runs) {
                r.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(q.moved).hasSize(50).doesNotHaveDuplicates();
        assertThat(audit.entries(10)).allSatisfy(e -> assertThat(e.state()).isEqualTo("done"))
                .as("the first moved all fifty; the others found none and recorded nothing").hasSize(1);
    }
}
