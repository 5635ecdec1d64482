package dev.idemkit.app.wiring;

import dev.idemkit.app.config.AppSettings;
import dev.idemkit.ports.out.DeadLetterQueue;
import dev.idemkit.ports.out.MessageTransport;
import java.util.List;

/**
 * One transport technology, wired from the settings (like {@link StoreBinding} for stores): the transport, its
 * dead-letter queue, the broker's names for the app's queues, and what only that broker can tell. {@link #start}
 * picks the binding; nothing else looks at which technology it is.
 */
public interface TransportBinding extends AutoCloseable {

    /** The binding the settings name: {@link RabbitBinding}, {@link SqsBinding} or {@link KafkaBinding}. */
    /** @param store the store, whose transactions keep Kafka's positions with {@code kafka.offsets=database} */
    static TransportBinding start(AppSettings settings, EmbeddedEngines engines, StoreBinding<?> store) {
        return switch (settings.transport().kind()) {
            case RABBIT -> RabbitBinding.start(settings);
            case SQS -> SqsBinding.start(settings, engines);
            case KAFKA -> KafkaBinding.start(settings, store.inbox());
        };
    }

    MessageTransport transport();

    DeadLetterQueue deadLetters();

    /** Where the broker is, without secrets. */
    String description();

    AppSettings.TransportKind kind();

    /** Whether it is a server started inside this process (embedded ElasticMQ). */
    boolean embedded();

    /** The broker's name for one of the app's logical queue names. */
    String queue(String logical);

    /** The broker's own dead-lettering trail of a dead letter, as lines (RabbitMQ's {@code x-death}). */
    List<String> brokerTrail(String queue, String deadLetterId);

    /** Deletes everything the transport declared for {@code queue} (work, retry and dead-letter queues); best effort. */
    void deleteQueue(String queue);

    @Override
    void close();
}
