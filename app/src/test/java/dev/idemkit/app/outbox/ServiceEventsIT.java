package dev.idemkit.app.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.app.TestEnvironment;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.config.Sources;
import dev.idemkit.app.consumers.OrderPlaced;
import dev.idemkit.app.payments.Payment;
import dev.idemkit.app.payments.PaymentCharger;
import dev.idemkit.app.payments.PaymentLedger;
import dev.idemkit.app.payments.PaymentRequest;
import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.app.wiring.ConsumerKind;
import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Message;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.httpkey.ClientId;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.in.IdempotentRequests;
import dev.idemkit.ports.out.InboxStore;
import dev.idemkit.ports.out.OutboxEntry;
import dev.idemkit.ports.out.OutboxStore;
import dev.idemkit.ports.out.UnitOfWork;
import dev.idemkit.ports.service.MessageHandler;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The example service's events go through the outbox: {@code payments.created} in the Idempotency-Key claim's
 * transaction, {@code inventory.reserved} in the inbox's. Effect and event commit together or not at all, and a
 * replay or a redelivery appends nothing.
 */
class ServiceEventsIT {
    private static String schema;
    private static Assembly assembly;
    private static OutboxStore outbox;

    @BeforeAll
    static void start() {
        schema = TestEnvironment.unique("app_it_events");
        assembly = Assembly.start(AppSettings.resolve(Sources.of(Map.of(), TestEnvironment.settings(schema))));
        outbox = assembly.store().outbox().orElseThrow();
    }

    @AfterAll
    static void stop() throws Exception {
        if (assembly != null) {
            assembly.close();
        }
        TestEnvironment.dropSchema(schema);
    }

    private static List<OutboxEntry> events(String destination, Predicate<OutboxEntry> which) {
        return outbox.unsent(10_000).stream().filter(e -> e.row().message().destination().equals(destination))
                .filter(which).toList();
    }

    private static IdempotentRequests.Request request(String key, PaymentRequest p) {
        byte[] body = ("{\"account_id\":\"" + p.accountId() + "\",\"amount\":" + p.amount() + ",\"currency\":\""
                + p.currency() + "\"}").getBytes(StandardCharsets.UTF_8);
        return new IdempotentRequests.Request(ClientId.of("a"), key, "POST", "/payments", body);
    }

    @Test
    void aChargeEmitsPaymentsCreatedOnceAndItsReplayNothing() {
        String account = "acc-" + UUID.randomUUID();
        PaymentRequest p = new PaymentRequest(new BigDecimal("150.00"), "BRL", account);
        String key = UUID.randomUUID().toString();
        IdempotentRequests.Reply first = assembly.paymentCharger().charge(request(key, p), p);
        IdempotentRequests.Reply replay = assembly.paymentCharger().charge(request(key, p), p);

        assertThat(first.response().status()).isEqualTo(201);
        assertThat(replay.replayed()).isTrue();
        List<OutboxEntry> created = events(Payment.CREATED_EVENT, e -> e.row().message().orderingKey().endsWith("/" + account));
        assertThat(created).singleElement().satisfies(e -> {
            assertThat(e.row().message().body()).as("the event is the stored response's body").isEqualTo(
                    first.response().body());
            assertThat(e.row().headers()).containsKey("payment_id");
        });
    }

    @Test
    void aChargeWhoseTransactionFailsAfterTheChargeLeavesNeitherPaymentNorEvent() {
        String account = "acc-" + UUID.randomUUID();
        PaymentRequest p = new PaymentRequest(new BigDecimal("10.00"), "BRL", account);
        PaymentCharger failing = assembly.store().charger(KeyPolicy.defaults(), ledger -> new PaymentLedger() {
            @Override
            public Payment charge(ClientId client, PaymentRequest request) {
                ledger.charge(client, request); // charged and event appended, in the claim's transaction
                throw new IllegalStateException("failed after the charge");
            }

            @Override
            public java.util.Optional<Payment> find(ClientId client, String id) {
                return ledger.find(client, id);
            }

            @Override
            public List<Payment> forAccount(ClientId client, String accountId, int limit) {
                return ledger.forAccount(client, accountId, limit);
            }
        });
        assertThatThrownBy(() -> failing.charge(request(UUID.randomUUID().toString(), p), p))
                .hasMessageContaining("failed after the charge");

        assertThat(assembly.store().ledger().forAccount(ClientId.of("a"), account, 10)).isEmpty();
        assertThat(events(Payment.CREATED_EVENT, e -> e.row().message().orderingKey().endsWith("/" + account))).isEmpty();
    }

    @Test
    @SuppressWarnings("unchecked")
    void aNewReservationEmitsInventoryReservedOnceWhatever() throws Exception {
        InboxStore<UnitOfWork> inbox = (InboxStore<UnitOfWork>) assembly.store().inbox();
        MessageHandler<UnitOfWork> reserve = (MessageHandler<UnitOfWork>) (MessageHandler<?>) assembly.store().effects()
                .reserveInventory();
        String order = "order-" + UUID.randomUUID();
        String customer = "cust-" + UUID.randomUUID();
        byte[] body = new OrderPlaced(order, customer, List.of("sku-1", "sku-2")).toJson();
        String consumer = ConsumerKind.RESERVE_INVENTORY.consumerName();

        Outcome first = run(inbox, consumer, "m-1-" + order, body, reserve);
        Outcome redelivered = run(inbox, consumer, "m-1-" + order, body, reserve);
        Outcome sameOrderOtherId = run(inbox, consumer, "m-2-" + order, body, reserve);
        assertThatThrownBy(() -> run(inbox, consumer, "m-3-" + order.replace("order", "other"),
                new OrderPlaced(order.replace("order", "other"), customer, List.of("sku-3")).toJson(), (m, w) -> {
                    reserve.handle(m, w);
                    throw new IllegalStateException("the effect failed after its append");
                })).hasMessageContaining("after its append");

        assertThat(first).isInstanceOf(Outcome.Processed.class);
        assertThat(redelivered).isInstanceOf(Outcome.Duplicate.class);
        assertThat(sameOrderOtherId).as("the inbox lets it through; the reservation's key absorbs it")
                .isInstanceOf(Outcome.Processed.class);
        List<OutboxEntry> reserved = events(OrderPlaced.RESERVED_EVENT, e -> e.row().message().orderingKey().endsWith("/" + customer));
        assertThat(reserved).as("one event for the one reservation; none for the rolled-back one").singleElement()
                .satisfies(e -> {
                    assertThat(e.row().headers()).containsEntry("order_id", order);
                    assertThat(e.row().message().body()).isEqualTo(body);
                });
    }

    /**
     * Ordering keys are one namespace across destinations: a parked {@code payments.created} for account "x" must not
     * hold up the {@code inventory.reserved} of a customer who is also "x".
     */
    @Test
    @SuppressWarnings("unchecked")
    void aParkedPaymentEventDoesNotHoldUpTheEventsOfACustomerWithTheSameId() throws Exception {
        String shared = "x-" + UUID.randomUUID();
        PaymentRequest p = new PaymentRequest(new BigDecimal("5.00"), "BRL", shared);
        assembly.paymentCharger().charge(request(UUID.randomUUID().toString(), p), p);
        java.time.Instant now = java.time.Instant.now();
        outbox.relay(1000, now, runs -> {
            Map<String, dev.idemkit.ports.out.RelayOutcome> out = new java.util.HashMap<>();
            runs.forEach(run -> run.stream().filter(r -> r.message().destination().equals(Payment.CREATED_EVENT))
                    .forEach(r -> out.put(r.id(), new dev.idemkit.ports.out.RelayOutcome.Parked(
                            new dev.idemkit.domain.deadletter.AttemptRecord(1, now, "refused"), "refused"))));
            return out;
        });
        InboxStore<UnitOfWork> inbox = (InboxStore<UnitOfWork>) assembly.store().inbox();
        MessageHandler<UnitOfWork> reserve = (MessageHandler<UnitOfWork>) (MessageHandler<?>) assembly.store().effects()
                .reserveInventory();
        String order = "order-" + UUID.randomUUID();
        run(inbox, ConsumerKind.RESERVE_INVENTORY.consumerName(), "m-" + order,
                new OrderPlaced(order, shared, List.of("sku")).toJson(), reserve);

        List<String> handed = new java.util.ArrayList<>();
        outbox.relay(1000, now, runs -> {
            runs.forEach(run -> run.forEach(r -> handed.add(r.message().destination() + " " + r.message().orderingKey())));
            return Map.of(); // leave them as they are
        });
        assertThat(handed).contains(OrderPlaced.RESERVED_EVENT + " " + OrderPlaced.RESERVED_EVENT + "/" + shared);
    }

    private static Outcome run(InboxStore<UnitOfWork> inbox, String consumer, String id, byte[] body,
            MessageHandler<UnitOfWork> handler) {
        Message m = Message.of(id, body, OrderPlaced.QUEUE);
        return inbox.runOnce(InboxKey.of(consumer, id), Fingerprint.of(body), w -> {
            handler.handle(m, w);
            return null;
        }).outcome();
    }
}
