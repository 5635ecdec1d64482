package dev.idemkit.app.wiring;

import dev.idemkit.adapters.rabbit.RabbitDeadLetter;
import dev.idemkit.adapters.rabbit.RabbitDeadLetterQueue;
import dev.idemkit.adapters.rabbit.RabbitMessageTransport;
import dev.idemkit.adapters.rabbit.RabbitSettings;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.ports.out.DeadLetterQueue;
import dev.idemkit.ports.out.MessageTransport;
import java.util.List;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** RabbitMQ, wired: queue names as they are, the broker's {@code x-death} trail for dead letters. */
final class RabbitBinding implements TransportBinding {
    private static final Logger LOG = LoggerFactory.getLogger(RabbitBinding.class);

    private final RabbitMessageTransport transport;
    private final RabbitDeadLetterQueue deadLetters;
    private final String description;

    private RabbitBinding(RabbitMessageTransport transport, String description) {
        this.transport = transport;
        this.deadLetters = transport.deadLetterQueue();
        this.description = description;
    }

    static RabbitBinding start(AppSettings s) {
        RabbitSettings settings = settings(s);
        RabbitMessageTransport rabbit = new RabbitMessageTransport(settings);
        return new RabbitBinding(rabbit, "RabbitMQ at " + AppSettings.redact(s.transport().rabbitUri())
                + (settings.addresses().isEmpty() ? "" : " (nodes " + String.join(",", settings.addresses()) + ")")
                + ", " + settings.queueType().label() + " queues"
                + (settings.queueType() == RabbitSettings.QueueType.QUORUM
                        ? " (delivery limit " + settings.deliveryLimit() + ")" : ""));
    }

    /** The adapter's settings as the app resolved them: uri, options, consumers per queue, attempts. */
    static RabbitSettings settings(AppSettings s) {
        return RabbitSettings.fromEnvironment(s.transport().rabbitOptions()).withUri(s.transport().rabbitUri())
                .withConsumers(s.transport().concurrency()).withMaxAttemptsHint(s.retry().maxAttempts());
    }

    @Override
    public MessageTransport transport() {
        return transport;
    }

    @Override
    public DeadLetterQueue deadLetters() {
        return deadLetters;
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public AppSettings.TransportKind kind() {
        return AppSettings.TransportKind.RABBIT;
    }

    @Override
    public boolean embedded() {
        return false;
    }

    /** RabbitMQ takes the app's names as they are. */
    @Override
    public String queue(String logical) {
        return logical;
    }

    @Override
    public List<String> brokerTrail(String queue, String deadLetterId) {
        return deadLetters.findDetailed(queue, deadLetterId).map(d -> Stream.concat(
                d.brokerDeaths().stream().map(x -> "x-death: " + death(x)),
                d.earlierDeaths().stream().map(x -> "earlier x-death (moved out by a republished copy): " + death(x)))
                .toList()).orElse(List.of());
    }

    private static String death(RabbitDeadLetter.BrokerDeath x) {
        return "queue=" + x.queue() + " reason=" + x.reason() + " count=" + x.count() + " time=" + x.time()
                + " exchange=" + x.exchange();
    }

    @Override
    public void deleteQueue(String queue) {
        try {
            transport.deleteTopology(queue);
        } catch (RuntimeException e) {
            LOG.warn("could not delete the queues of {}: {}", queue, e.toString());
        }
    }

    @Override
    public void close() {
        transport.close();
    }
}
