package dev.idemkit.exercises;

import com.sun.net.httpserver.HttpHandler;
import dev.idemkit.ports.in.DeadLetters;
import dev.idemkit.ports.out.Alerts;
import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.UnitOfWork;
import dev.idemkit.domain.retry.RetryPolicy;
import dev.idemkit.ports.service.MessageHandler;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * What the exercises need from a running idemkit, handed to them by whoever assembled it (the app): the configured
 * broker, the seed's account-credit effect on the configured store, the payments API, and an SQS FIFO broker. The
 * exercises name no adapter: everything concrete is behind these methods.
 */
public interface Workbench {

    /** The configured broker. */
    Broker broker();

    /**
     * An SQS broker for exercise 3 (which is about SQS FIFO whatever the configured transport): the configured one
     * when it is SQS, otherwise another; closing it closes only what was started for it.
     */
    Broker sqs();

    /** The seed's {@code balance = balance + amount} effect on the configured store. */
    Credits credits();

    /** The app's inbox consumer of account credits, under {@code consumerName}. */
    DeliveryHandler creditConsumer(String consumerName);

    /** A consumer running {@code handler} on the configured store's inbox, with its own retry policy. */
    DeliveryHandler consumer(String consumerName, MessageHandler<UnitOfWork> handler, RetryPolicy policy);

    /** Dead-letter operations for queues read by {@code consumerName}, alerting through {@code alerts}. */
    DeadLetters deadLetters(String consumerName, Alerts alerts);

    /** The body of an {@code orders.placed} message as the app's consumers read it. */
    byte[] orderPlaced(String orderId, String customerId, List<String> items);

    /**
     * The payments API ({@code POST /payments} under Idempotency-Key, {@code GET /payments?account_id=}) as an
     * HTTP handler, for these API keys (client name to key), its charges passing through {@code charges}.
     */
    HttpHandler paymentsApi(Map<String, String> apiKeys, ChargeDecorator charges);

    /** A broker with the app's queue naming. */
    interface Broker extends AutoCloseable {
        MessageTransport transport();

        /** The broker's name for a logical queue name (SQS allows fewer characters). */
        String queue(String logical);

        /** Where it is, without secrets. */
        String description();

        /** Deletes everything declared for {@code queue}; best effort. */
        void deleteQueue(String queue);

        /** The broker's own dead-lettering trail of a dead letter, as lines (RabbitMQ's x-death). */
        List<String> brokerTrail(String queue, String deadLetterId);

        /** The broker's clock, where it can be moved (an embedded SQS server). */
        Optional<MovableClock> clock();

        @Override
        void close();
    }

    /** A server clock a test may move forward. */
    @FunctionalInterface
    interface MovableClock {
        void advance(Duration by);
    }

    /** The account-credit effect and its reads. */
    interface Credits {
        /** The body of an {@code accounts.credit} message. */
        byte[] message(String accountId, BigDecimal amount);

        /** The same credit with no inbox at all, in its own transaction (exercise 1's broken consumer). */
        void creditWithoutIdempotency(byte[] message);

        BigDecimal balance(String accountId);

        /** Where the dedup decision is made ("PostgreSQL constraint ... PRIMARY KEY", ...). */
        String dedupEvidence();
    }

    /** Wraps each charge of the payments API (a decorator: the exercise's faults, a counter). */
    interface ChargeDecorator {
        ChargeDecorator NONE = new ChargeDecorator() {
            @Override
            public <T> T around(String accountId, Supplier<T> charge) {
                return charge.get();
            }
        };

        /** Runs {@code charge}, a charge to {@code accountId}, and returns what it returns. */
        <T> T around(String accountId, Supplier<T> charge);
    }
}
