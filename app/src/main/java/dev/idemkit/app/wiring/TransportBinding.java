package dev.idemkit.app.wiring;

import dev.idemkit.adapters.rabbit.RabbitMessageTransport;
import dev.idemkit.adapters.sqs.SqsMessageTransport;
import dev.idemkit.adapters.sqs.SqsSettings;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.ports.out.DeadLetterQueue;
import dev.idemkit.ports.out.MessageTransport;
import java.net.URI;
import java.time.Duration;

/** The transport chosen by configuration, with its dead-letter queue and a description without secrets. */
public final class TransportBinding implements AutoCloseable {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TransportBinding.class);
    private final MessageTransport transport;
    private final DeadLetterQueue deadLetters;
    private final String description;
    private final boolean embedded;
    private final AppSettings.TransportKind kind;

    private TransportBinding(AppSettings.TransportKind kind, MessageTransport transport, DeadLetterQueue deadLetters,
            String description, boolean embedded) {
        this.kind = kind;
        this.transport = transport;
        this.deadLetters = deadLetters;
        this.description = description;
        this.embedded = embedded;
    }

    static TransportBinding start(AppSettings s, EmbeddedEngines engines) {
        if (s.transport() == AppSettings.TransportKind.RABBIT) {
            RabbitMessageTransport rabbit = Assembly.rabbit(s);
            return new TransportBinding(s.transport(), rabbit, rabbit.deadLetterQueue(),
                    "RabbitMQ at " + AppSettings.redact(s.rabbitUri()), false);
        }
        boolean embedded = s.sqsEndpoint().isEmpty();
        SqsSettings sqs = sqsSettings(s, engines);
        SqsMessageTransport transport = Assembly.sqs(sqs);
        String where = embedded ? "embedded ElasticMQ (a real SQS-compatible server started in this process) at "
                + sqs.endpoint().orElseThrow() : sqs.endpoint().map(URI::toString).orElse("AWS SQS in " + sqs.region());
        return new TransportBinding(s.transport(), transport, transport.deadLetters(), "SQS, " + where, embedded);
    }

    static SqsSettings sqsSettings(AppSettings s, EmbeddedEngines engines) {
        SqsSettings base;
        if (s.sqsEndpoint().isEmpty()) {
            base = SqsSettings.local(engines.sqsEndpoint());
        } else if (s.sqsEndpoint().get().equals(AppSettings.AWS)) {
            base = SqsSettings.defaults(s.sqsRegion());
        } else {
            base = SqsSettings.local(URI.create(s.sqsEndpoint().get()));
        }
        return base.withWaitTimeSeconds(2).withMaxConcurrentHandlers(s.concurrency())
                .withVisibility(Duration.ofSeconds(30), Duration.ofSeconds(10));
    }

    public MessageTransport transport() {
        return transport;
    }

    public DeadLetterQueue deadLetters() {
        return deadLetters;
    }

    public String description() {
        return description;
    }

    public boolean embedded() {
        return embedded;
    }

    public AppSettings.TransportKind kind() {
        return kind;
    }

    /**
     * The broker's own dead-lettering trail for a dead letter, as lines: RabbitMQ's {@code x-death}
     * entries; SQS keeps none beyond idemkit's attributes.
     */
    public java.util.List<String> brokerTrail(String queue, String deadLetterId) {
        if (deadLetters instanceof dev.idemkit.adapters.rabbit.RabbitDeadLetterQueue rabbit) {
            return rabbit.findDetailed(queue, deadLetterId).map(d -> java.util.stream.Stream.concat(
                    d.brokerDeaths().stream().map(x -> "x-death: " + death(x)),
                    d.earlierDeaths().stream().map(x -> "earlier x-death (moved out by a republished copy): " + death(x)))
                    .toList()).orElse(java.util.List.of());
        }
        return java.util.List.of("(SQS has no x-death; origin, reason and attempts travel as message attributes)");
    }

    private static String death(dev.idemkit.adapters.rabbit.RabbitDeadLetter.BrokerDeath x) {
        return "queue=" + x.queue() + " reason=" + x.reason() + " count=" + x.count() + " time=" + x.time()
                + " exchange=" + x.exchange();
    }

    /**
     * The broker's name for one of the app's queues. SQS allows only letters, digits, '-' and '_' (plus a
     * {@code .fifo} suffix), so on SQS {@code orders.placed} is {@code orders-placed}; RabbitMQ takes names as they are.
     */
    public String queue(String logical) {
        if (kind != AppSettings.TransportKind.SQS) {
            return logical;
        }
        boolean fifo = logical.endsWith(".fifo");
        String base = fifo ? logical.substring(0, logical.length() - 5) : logical;
        return base.replaceAll("[^A-Za-z0-9_-]", "-") + (fifo ? ".fifo" : "");
    }

    /** Deletes everything the transport declared for {@code queue} (work, retry and dead-letter queues). */
    public void deleteQueue(String queue) {
        try {
            if (transport instanceof RabbitMessageTransport rabbit) {
                rabbit.deleteTopology(queue);
            } else if (transport instanceof SqsMessageTransport sqs) {
                sqs.deleteQueues(queue);
            }
        } catch (RuntimeException e) {
            LOG.warn("could not delete the queues of {}: {}", queue, e.toString());
        }
    }

    @Override
    public void close() {
        transport.close();
        if (deadLetters instanceof AutoCloseable c && c != transport) {
            try {
                c.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing the dead-letter queue failed: " + e.getMessage(), e);
            }
        }
    }
}
