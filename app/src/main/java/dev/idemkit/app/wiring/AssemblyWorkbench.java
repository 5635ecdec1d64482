package dev.idemkit.app.wiring;

import com.sun.net.httpserver.HttpHandler;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.consumers.AccountCredit;
import dev.idemkit.app.consumers.BusinessEffects;
import dev.idemkit.app.consumers.OrderPlaced;
import dev.idemkit.app.http.ApiKeys;
import dev.idemkit.app.http.PaymentsApi;
import dev.idemkit.app.payments.PaymentLedger;
import dev.idemkit.domain.httpkey.KeyPolicy;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.exercises.Workbench;
import dev.idemkit.ports.in.DeadLetters;
import dev.idemkit.ports.out.Alerts;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.UnitOfWork;
import dev.idemkit.ports.service.MessageHandler;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The exercises' {@link Workbench} on an {@link Assembly}: its broker, store, consumers and payments API. */
public final class AssemblyWorkbench implements Workbench {
    private final Assembly assembly;

    public AssemblyWorkbench(Assembly assembly) {
        this.assembly = assembly;
    }

    @Override
    public Broker broker() {
        return new BindingBroker(assembly.transportBinding(), assembly.engines(), false);
    }

    /** The configured transport when it is SQS; otherwise one on the configured SQS endpoint or the embedded server. */
    @Override
    public Broker sqs() {
        TransportBinding configured = assembly.transportBinding();
        if (configured.kind() == AppSettings.TransportKind.SQS) {
            return new BindingBroker(configured, assembly.engines(), false);
        }
        AppSettings asSqs = assembly.settings().withTransport(assembly.settings().transport().withKind(AppSettings.TransportKind.SQS));
        return new BindingBroker(TransportBinding.start(asSqs, assembly.engines(), assembly.store()), assembly.engines(),
                true);
    }

    @Override
    public Credits credits() {
        BusinessEffects<?> effects = assembly.store().effects();
        return new Credits() {
            @Override
            public byte[] message(String accountId, BigDecimal amount) {
                return new AccountCredit(accountId, amount).toJson();
            }

            @Override
            public void creditWithoutIdempotency(byte[] message) {
                effects.creditWithoutIdempotency(AccountCredit.parse(message));
            }

            @Override
            public BigDecimal balance(String accountId) {
                return effects.balance(accountId);
            }

            @Override
            public String dedupEvidence() {
                return effects.dedupEvidence();
            }
        };
    }

    @Override
    public DeliveryHandler creditConsumer(String consumerName) {
        return assembly.consumer(consumerName, ConsumerKind.CREDIT_ACCOUNT);
    }

    @Override
    public DeliveryHandler consumer(String consumerName, MessageHandler<UnitOfWork> handler, RetryPolicy policy) {
        return consumerOn(assembly.store(), consumerName, handler, policy);
    }

    private <U extends UnitOfWork> DeliveryHandler consumerOn(StoreBinding<U> store, String consumerName,
            MessageHandler<UnitOfWork> handler, RetryPolicy policy) {
        return assembly.consumer(store, consumerName, handler, policy);
    }

    @Override
    public DeadLetters deadLetters(String consumerName, Alerts alerts) {
        return assembly.deadLetters(consumerName, alerts);
    }

    @Override
    public byte[] orderPlaced(String orderId, String customerId, List<String> items) {
        return new OrderPlaced(orderId, customerId, items).toJson();
    }

    @Override
    public HttpHandler paymentsApi(Map<String, String> apiKeys, ChargeDecorator charges) {
        StoreBinding<?> store = assembly.store();
        return new PaymentsApi(store.charger(KeyPolicy.defaults(), ledger -> PaymentLedger.charging((client,
                request) -> charges.around(request.accountId(), () -> ledger.charge(client, request)), ledger)),
                store.ledger(), ApiKeys.of(apiKeys), assembly.metrics(), Map::of);
    }

    /** A transport binding as a {@link Broker}; closes it only when it was started for the exercise. */
    private record BindingBroker(TransportBinding binding, EmbeddedEngines engines, boolean owned) implements Broker {
        @Override
        public MessageTransport transport() {
            return binding.transport();
        }

        @Override
        public String queue(String logical) {
            return binding.queue(logical);
        }

        @Override
        public String description() {
            return binding.description();
        }

        @Override
        public void deleteQueue(String queue) {
            binding.deleteQueue(queue);
        }

        @Override
        public List<String> brokerTrail(String queue, String deadLetterId) {
            return binding.brokerTrail(queue, deadLetterId);
        }

        @Override
        public Optional<MovableClock> clock() {
            if (binding.kind() == AppSettings.TransportKind.SQS && binding.embedded() && engines.runsSqs()) {
                return Optional.of((Duration by) -> engines.advanceSqsClock(by));
            }
            return Optional.empty();
        }

        @Override
        public void close() {
            if (owned) {
                binding.close();
            }
        }
    }
}
