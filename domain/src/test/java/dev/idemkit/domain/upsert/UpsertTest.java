package dev.idemkit.domain.upsert;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.NaturalKey;
import dev.idemkit.domain.Outcome;
import org.junit.jupiter.api.Test;

class UpsertTest {

    @Test
    void secondInsertOfAnOrderIsADuplicateAndKeepsTheFirstValue() {
        NaturalKey order = NaturalKey.of("order-42");
        var first = Upsert.apply(UpsertState.<String>empty(), order, "first");
        var second = Upsert.apply(first.state(), order, "second");

        assertThat(first.outcome()).isEqualTo(Outcome.PROCESSED);
        assertThat(second.outcome()).isEqualTo(Outcome.DUPLICATE);
        assertThat(second.state().get(order)).contains("first");
    }

    @Test
    void decideDependsOnlyOnPresence() {
        assertThat(Upsert.decide(false)).isEqualTo(Outcome.PROCESSED);
        assertThat(Upsert.decide(true)).isEqualTo(Outcome.DUPLICATE);
    }
}
