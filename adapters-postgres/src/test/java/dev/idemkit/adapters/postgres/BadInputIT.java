package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.strings;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.InvalidKeyException;
import dev.idemkit.domain.KeyRules;
import dev.idemkit.domain.NaturalKey;
import dev.idemkit.domain.Version;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.domain.versioned.VersionedEvent;
import dev.idemkit.ports.out.StoreUnavailableException;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Bad input never reaches SQL; a throwing effect leaves no key; values are bound, never spliced into
 * SQL; a database failure surfaces as StoreUnavailableException.
 */
class BadInputIT {
    private static TestDatabase pg;
    private static PostgresInboxStore inbox;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start();
        inbox = new PostgresInboxStore(pg.db());
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    /** Law: any key that is too long or holds a control / non-ASCII character is refused with no statement sent. */
    @Test
    void overLongOrControlCharacterKeysAreRejectedBeforeAnySql() {
        long statementsBefore = pg.counting().statements();
        long connectionsBefore = pg.counting().connections();
        AtomicInteger effects = new AtomicInteger();
        String consumer = "bad-input-" + UUID.randomUUID();
        qt().withExamples(1000).forAll(strings().allPossible().ofLengthBetween(0, 300), integers().between(0, 3))
                .assuming((key, store) -> !KeyRules.isValid(key))
                .check((key, store) -> {
                    try {
                        switch (store) {
                            case 0 -> inbox.runOnce(InboxKey.of(consumer, key), Fingerprint.of("x"),
                                    w -> effects.incrementAndGet());
                            case 1 -> new PostgresVersionedStore<>(pg.db(), ProductPrice.table())
                                    .apply(new VersionedEvent<>(key, Version.of(1), 1L));
                            case 2 -> new PostgresUpsertStore<>(pg.db(), Shipment.table()).insertIfAbsent(NaturalKey.of(key), "a");
                            default -> new PostgresIdempotencyRecords(pg.db()).find(ScopedKey.of("client", key));
                        }
                        return false;
                    } catch (InvalidKeyException expected) {
                        return true;
                    }
                });
        assertThat(pg.counting().statements()).isEqualTo(statementsBefore);
        assertThat(pg.counting().connections()).isEqualTo(connectionsBefore);
        assertThat(effects).hasValue(0);
        assertThat(pg.queryLong("SELECT count(*) FROM processed_messages WHERE consumer = ?", consumer)).isZero();
    }

    @Test
    void aKeyOf256CharactersAndAKeyWithANewlineAreRefusedNamingTheRule() {
        assertThatThrownBy(() -> InboxKey.of("c", "k".repeat(256))).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("at most 255");
        assertThatThrownBy(() -> InboxKey.of("c", "abc\ndef")).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("0xa");
    }

    @Test
    void anEffectThatThrowsLeavesNoKeyBehindAndTheRetryRuns() {
        InboxKey key = InboxKey.of("c", "poison-" + UUID.randomUUID());
        String account = "acc-" + UUID.randomUUID();
        RuntimeException boom = new IllegalArgumentException("malformed payload");

        assertThatThrownBy(() -> inbox.runOnce(key, Fingerprint.of("p"), work -> {
            Accounts.credit(work, account, 10);
            throw boom;
        })).isSameAs(boom);
        assertThat(inbox.recorded(key)).isEmpty();
        assertThat(new Accounts(pg).balance(account)).isZero();

        inbox.runOnce(key, Fingerprint.of("p"), work -> {
            Accounts.credit(work, account, 10);
            return null;
        });
        assertThat(new Accounts(pg).balance(account)).isEqualTo(10);
    }

    @Test
    void keysThatLookLikeSqlAreStoredVerbatimBecauseEveryValueIsBound() {
        String sneaky = "x');DROP/**/TABLE/**/processed_messages;--'" + UUID.randomUUID();
        InboxKey key = InboxKey.of("c'--", sneaky);

        assertThat(inbox.runOnce(key, Fingerprint.of("p"), w -> null).outcome().effectRan()).isTrue();
        assertThat(inbox.recorded(key)).contains(Fingerprint.of("p"));
        assertThat(pg.queryLong("SELECT count(*) FROM processed_messages WHERE consumer = ? AND message_id = ?",
                "c'--", sneaky)).isOne();
    }

    @Test
    void identifiersOfAMappingThatAreNotPlainNamesAreRefused() {
        assertThatThrownBy(() -> new VersionedTable<>("accounts; DROP TABLE accounts", "id", "version",
                ValueColumns.bigint("balance"))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new UpsertTable<>("shipments", "order_id\"", ValueColumns.text("address")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ValueColumns.text("Address")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aDatabaseOutageSurfacesAsStoreUnavailableAndKeepsNothing() {
        InboxKey key = InboxKey.of("c", "outage-" + UUID.randomUUID());
        AtomicInteger effects = new AtomicInteger();
        pg.counting().setDown(true);
        try {
            assertThatThrownBy(() -> inbox.runOnce(key, Fingerprint.of("p"), w -> effects.incrementAndGet()))
                    .isInstanceOf(StoreUnavailableException.class);
            assertThatThrownBy(() -> inbox.recorded(key)).isInstanceOf(StoreUnavailableException.class);
        } finally {
            pg.counting().setDown(false);
        }
        assertThat(effects).hasValue(0);
        assertThat(inbox.recorded(key)).isEmpty();
    }
}
