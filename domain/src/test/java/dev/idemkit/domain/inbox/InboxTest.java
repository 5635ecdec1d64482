package dev.idemkit.domain.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.Transition;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class InboxTest {

    @Test
    void duplicateDeliveryRunsEffectOnce() {
        InboxState s = InboxState.empty();
        List<String> effects = new ArrayList<>();
        for (String id : List.of("1", "2", "1", "2", "1", "3")) {
            Transition<InboxState> t = Inbox.apply(s, delivery("billing", id, "body-" + id));
            s = t.state();
            if (t.outcome().effectRan()) {
                effects.add(id);
            }
        }
        assertThat(effects).containsExactly("1", "2", "3");
    }

    @Test
    void aNewKeyIsProcessedAndRecordedWithItsFingerprint() {
        InboxDelivery d = delivery("billing", "m-1", "hello");
        Transition<InboxState> t = Inbox.apply(InboxState.empty(), d);
        assertThat(t.outcome()).isEqualTo(Outcome.PROCESSED);
        assertThat(t.state().fingerprintOf(d.key())).contains(Fingerprint.of("hello"));
    }

    @Test
    void decideTellsRedeliveryFromReusedId() {
        Fingerprint recorded = Fingerprint.of("a");
        assertThat(Inbox.decide(Optional.empty(), recorded)).isEqualTo(Outcome.PROCESSED);
        assertThat(Inbox.decide(Optional.of(recorded), Fingerprint.of("a"))).isEqualTo(Outcome.DUPLICATE);
        assertThat(Inbox.decide(Optional.of(recorded), Fingerprint.of("b")))
                .isEqualTo(new Outcome.Rejected("message id reused with a different payload"));
    }

    @Test
    void stateIsImmutable() {
        InboxState empty = InboxState.empty();
        Inbox.apply(empty, delivery("billing", "m-1", "x"));
        assertThat(empty.recorded()).isEmpty();
    }

    private static InboxDelivery delivery(String consumer, String id, String body) {
        return new InboxDelivery(InboxKey.of(consumer, id), Fingerprint.of(body));
    }
}
