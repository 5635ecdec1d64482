package dev.idemkit.ports.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.ConsumerName;
import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.deadletter.AlertPolicy;
import dev.idemkit.domain.deadletter.Approval;
import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.deadletter.FailureGroup;
import dev.idemkit.domain.deadletter.RedriveAction;
import dev.idemkit.domain.deadletter.RedriveRequest;
import dev.idemkit.domain.deadletter.RedriveWindow;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.contract.ContractGenerators;
import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.in.DeadLetters;
import dev.idemkit.ports.in.DeadLetters.RedriveResult;
import dev.idemkit.ports.memory.InMemoryInboxStore;
import dev.idemkit.ports.memory.InMemoryMessageTransport;
import dev.idemkit.ports.out.Alert;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.DeadLetterEntry;
import dev.idemkit.ports.out.OutgoingMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class DeadLetterServiceTest {
    private static final ConsumerName CONSUMER = ConsumerName.of("billing");

    private final InMemoryMessageTransport transport = new InMemoryMessageTransport();
    private final InMemoryInboxStore inbox = new InMemoryInboxStore();
    private final List<Alert> alerts = new CopyOnWriteArrayList<>();
    private static final RedriveWindow WEEK = new RedriveWindow(Duration.ofDays(7));
    private final DeadLetterService service = new DeadLetterService(transport, alerts::add, AlertPolicy.defaults(),
            Clock.system(), ProcessedKeys.of(inbox, CONSUMER), WEEK);
    private final String queue = ContractGenerators.fresh("orders");
    /** Redriven messages (they carry the approval header) by id; everything else is dead-lettered. */
    private final Map<String, Map<String, String>> redriven = new ConcurrentHashMap<>();

    @AfterEach
    void closeTransport() {
        transport.close();
    }

    @Test
    void elevenDeadLettersRaiseAnAlert() {
        deadLetter(11);
        assertThat(service.checkDepth(queue)).isTrue();
        assertThat(alerts).singleElement().satisfies(a -> {
            assertThat(a.queue()).isEqualTo(queue);
            assertThat(a.depth()).isEqualTo(11);
            assertThat(a.threshold()).isEqualTo(10);
        });
    }

    @Test
    void tenDeadLettersDoNot() {
        deadLetter(10);
        assertThat(service.checkDepth(queue)).isFalse();
        assertThat(alerts).isEmpty();
        assertThat(service.depth(queue)).isEqualTo(10);
    }

    @Test
    void inspectLeavesDeadLettersInPlace() {
        deadLetter(3);
        List<DeadLetterEntry> seen = service.inspect(queue, 10);
        assertThat(seen).hasSize(3);
        assertThat(service.inspect(queue, 10)).isEqualTo(seen);
        assertThat(service.show(queue, seen.get(0).id())).contains(seen.get(0));
        assertThat(service.depth(queue)).isEqualTo(3);
    }

    @Test
    void redriveNeedsAnApprovalWithWhoAndWhy() {
        assertThatThrownBy(() -> new RedriveRequest(List.of("dl-1"), null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new Approval(" ", "fixed", Instant.now())).hasMessageContaining("approver");
        assertThatThrownBy(() -> new Approval("ops", "", Instant.now())).hasMessageContaining("reason");
    }

    @Test
    void redriveRepublishesWithTheApprovalAndSkipsWhatTheInboxAlreadyProcessed() {
        deadLetter(2);
        List<DeadLetterEntry> entries = service.inspect(queue, 10);
        String processedId = entries.get(0).deadLetter().original().rawId();
        String pendingId = entries.get(1).deadLetter().original().rawId();
        inbox.runOnce(new InboxKey(CONSUMER, entries.get(0).deadLetter().original().id().orElseThrow()),
                Fingerprint.of("whatever"), work -> null);

        List<RedriveResult> results = service.redrive(queue, new RedriveRequest(
                List.of(entries.get(0).id(), entries.get(1).id(), "no-such-id"),
                new Approval("ops-oncall", "payment provider is back", Instant.now())));

        assertThat(results).extracting(RedriveResult::deadLetterId, RedriveResult::action, RedriveResult::found)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(entries.get(0).id(), RedriveAction.SKIP_ALREADY_PROCESSED, true),
                        org.assertj.core.groups.Tuple.tuple(entries.get(1).id(), RedriveAction.REPUBLISH, true),
                        org.assertj.core.groups.Tuple.tuple("no-such-id", RedriveAction.SKIP_NO_ID, false));
        Eventually.await(Duration.ofSeconds(10), "the redriven message", () -> redriven.containsKey(pendingId));
        assertThat(redriven.get(pendingId))
                .containsEntry(InMemoryMessageTransport.REDRIVE_APPROVED_BY, "ops-oncall")
                .containsEntry(InMemoryMessageTransport.REDRIVE_REASON, "payment provider is back");
        assertThat(redriven).doesNotContainKey(processedId);
        assertThat(service.depth(queue)).as("the processed one stays in the DLQ").isEqualTo(1);
        assertThat(service.show(queue, entries.get(0).id())).isPresent();
    }

    @Test
    void aDryRunSaysWhatARedriveWouldDoAndMovesNothing() {
        deadLetter(2);
        List<DeadLetterEntry> entries = service.inspect(queue, 10);
        inbox.runOnce(new InboxKey(CONSUMER, entries.get(0).deadLetter().original().id().orElseThrow()),
                Fingerprint.of("whatever"), work -> null);
        RedriveRequest request = new RedriveRequest(List.of(entries.get(0).id(), entries.get(1).id(), "no-such-id"),
                new Approval("ops-oncall", "checking first", Instant.now()));

        List<RedriveResult> plan = service.plan(queue, request);

        assertThat(plan).extracting(RedriveResult::action, RedriveResult::found).containsExactly(
                org.assertj.core.groups.Tuple.tuple(RedriveAction.SKIP_ALREADY_PROCESSED, true),
                org.assertj.core.groups.Tuple.tuple(RedriveAction.REPUBLISH, true),
                org.assertj.core.groups.Tuple.tuple(RedriveAction.SKIP_NO_ID, false));
        Eventually.pause(300);
        assertThat(redriven).isEmpty();
        assertThat(service.depth(queue)).isEqualTo(2);
        assertThat(service.redrive(queue, request)).extracting(RedriveResult::action)
                .as("the redrive then does what the plan said").containsExactlyElementsOf(
                        plan.stream().map(RedriveResult::action).toList());
    }

    @Test
    void aDeadLetterOlderThanTheDedupWindowIsRedrivenOnlyWithASecondApproval() {
        deadLetter(1);
        DeadLetterEntry entry = service.inspect(queue, 10).get(0);
        String id = entry.deadLetter().original().rawId();
        Clock eightDaysOn = () -> Instant.now().plus(Duration.ofDays(8));
        DeadLetterService later = new DeadLetterService(transport, alerts::add, AlertPolicy.defaults(), eightDaysOn,
                ProcessedKeys.of(inbox, CONSUMER), WEEK);
        Approval ana = new Approval("ana", "provider fixed", Instant.now());

        RedriveResult refused = later.redrive(queue, new RedriveRequest(List.of(entry.id()), ana)).get(0);
        assertThat(refused.action()).isEqualTo(RedriveAction.SKIP_PAST_WINDOW);
        assertThat(refused.age()).isGreaterThan(Duration.ofDays(7));
        assertThat(refused.dedupWindow()).isEqualTo(Duration.ofDays(7));
        Eventually.pause(300);
        assertThat(redriven).doesNotContainKey(id);
        assertThat(service.depth(queue)).isEqualTo(1);

        RedriveResult forced = later.redrive(queue, new RedriveRequest(List.of(entry.id()), ana,
                java.util.Optional.of(new Approval("bo", "checked: the key's effect never ran", Instant.now())))).get(0);
        assertThat(forced.action()).isEqualTo(RedriveAction.REPUBLISH);
        Eventually.await(Duration.ofSeconds(10), "the forced redrive", () -> redriven.containsKey(id));
    }

    @Test
    void deadLettersAreGroupedByTheShapeOfTheirReasonsAndTheHeadOfTheQueueGivesTheOldestAge() {
        assertThat(service.oldestAge(queue)).as("an empty queue has no oldest").isEmpty();
        Instant firstAttempt = Instant.now().minus(Duration.ofHours(2));
        transport.subscribe(queue, d -> {
            int i = Integer.parseInt(d.message().rawId().substring(2));
            String reason = i < 3 ? "gave up after 3 attempts: IllegalStateException: insufficient funds for account " + i
                    : "gave up after 3 attempts: TimeoutException: ledger timed out after " + (i * 100) + " ms";
            d.deadLetter(reason, new AttemptRecord(1, firstAttempt, reason));
        });
        for (int i = 0; i < 5; i++) {
            transport.publish(queue, OutgoingMessage.of("m-" + i, "x".getBytes(StandardCharsets.UTF_8)));
        }
        Eventually.await(Duration.ofSeconds(10), "5 dead letters", () -> transport.depth(queue) == 5);
        Map<String, String> idOf = new java.util.HashMap<>();
        service.inspect(queue, 10).forEach(e -> idOf.put(e.deadLetter().original().rawId(), e.id()));

        DeadLetters.FailureGroups all = service.groups(queue, 10);
        assertThat(all.scanned()).isEqualTo(5);
        assertThat(all.complete()).isTrue();
        assertThat(all.groups()).extracting(g -> g.shape().text(), FailureGroup::count).containsExactly(
                org.assertj.core.groups.Tuple.tuple("gave up after <n> attempts: IllegalStateException: insufficient"
                        + " funds for account <n>", 3),
                org.assertj.core.groups.Tuple.tuple("gave up after <n> attempts: TimeoutException: ledger timed out"
                        + " after <n> ms", 2));
        assertThat(all.groups().get(0).deadLetterIds()).containsExactlyInAnyOrder(idOf.get("m-0"), idOf.get("m-1"),
                idOf.get("m-2"));
        assertThat(all.groups().get(1).deadLetterIds()).containsExactlyInAnyOrder(idOf.get("m-3"), idOf.get("m-4"));
        assertThat(all.groups()).allSatisfy(g -> assertThat(g.firstSeen()).isEqualTo(firstAttempt));

        DeadLetters.FailureGroups part = service.groups(queue, 4);
        assertThat(part.scanned()).isEqualTo(4);
        assertThat(part.complete()).as("a fifth was left unread").isFalse();
        assertThat(part.groups().stream().mapToInt(FailureGroup::count).sum()).isEqualTo(4);
        assertThatThrownBy(() -> service.groups(queue, 0)).isInstanceOf(IllegalArgumentException.class);

        assertThat(service.oldestAge(queue)).hasValueSatisfying(age -> assertThat(age)
                .isBetween(Duration.ofHours(2), Duration.ofHours(2).plusMinutes(1)));
        assertThat(service.depth(queue)).as("grouping reads, moves nothing").isEqualTo(5);
    }

    /** Publishes n messages that the consumer dead-letters, and waits for them in the DLQ. */
    private void deadLetter(int n) {
        transport.subscribe(queue, d -> {
            if (d.message().headers().containsKey(InMemoryMessageTransport.REDRIVE_APPROVED_BY)) {
                redriven.put(d.message().rawId(), d.message().headers());
                d.ack();
            } else {
                d.deadLetter("non-retryable: malformed", new AttemptRecord(1, Instant.now(), "malformed"));
            }
        });
        for (int i = 0; i < n; i++) {
            transport.publish(queue, OutgoingMessage.of("m-" + i, "x".getBytes(StandardCharsets.UTF_8)));
        }
        Eventually.await(Duration.ofSeconds(10), n + " dead letters", () -> transport.depth(queue) == n);
    }
}
