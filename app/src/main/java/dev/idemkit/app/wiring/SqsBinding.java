package dev.idemkit.app.wiring;

import dev.idemkit.adapters.sqs.SqsMessageTransport;
import dev.idemkit.adapters.sqs.SqsSettings;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.ports.out.DeadLetterQueue;
import dev.idemkit.ports.out.MessageTransport;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** SQS, wired: AWS, a configured endpoint or the embedded ElasticMQ; queue names SQS accepts. */
final class SqsBinding implements TransportBinding {
    private static final Logger LOG = LoggerFactory.getLogger(SqsBinding.class);

    private final SqsMessageTransport transport;
    private final DeadLetterQueue deadLetters;
    private final String description;
    private final boolean embedded;

    private SqsBinding(SqsMessageTransport transport, String description, boolean embedded) {
        this.transport = transport;
        this.deadLetters = transport.deadLetters();
        this.description = description;
        this.embedded = embedded;
    }

    static SqsBinding start(AppSettings s, EmbeddedEngines engines) {
        boolean embedded = s.transport().sqsEndpoint().isEmpty();
        SqsSettings sqs = settings(s, engines);
        String where = embedded ? "embedded ElasticMQ (a real SQS-compatible server started in this process) at "
                + sqs.endpoint().orElseThrow() : sqs.endpoint().map(URI::toString).orElse("AWS SQS in " + sqs.region());
        return new SqsBinding(new SqsMessageTransport(sqs), "SQS, " + where, embedded);
    }

    static SqsSettings settings(AppSettings s, EmbeddedEngines engines) {
        SqsSettings base;
        if (s.transport().sqsEndpoint().isEmpty()) {
            base = SqsSettings.local(engines.sqsEndpoint());
        } else if (s.transport().sqsEndpoint().get().equals(AppSettings.AWS)) {
            base = SqsSettings.defaults(s.transport().sqsRegion());
        } else {
            base = SqsSettings.local(URI.create(s.transport().sqsEndpoint().get()));
        }
        return base.withWaitTimeSeconds(2).withMaxConcurrentHandlers(s.transport().concurrency())
                .withVisibility(Duration.ofSeconds(30), Duration.ofSeconds(10));
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
        return AppSettings.TransportKind.SQS;
    }

    @Override
    public boolean embedded() {
        return embedded;
    }

    /**
     * SQS allows only letters, digits, '-' and '_' (plus a {@code .fifo} suffix), so on SQS {@code orders.placed} is
     * {@code orders-placed}.
     */
    @Override
    public String queue(String logical) {
        boolean fifo = logical.endsWith(".fifo");
        String base = fifo ? logical.substring(0, logical.length() - 5) : logical;
        return base.replaceAll("[^A-Za-z0-9_-]", "-") + (fifo ? ".fifo" : "");
    }

    @Override
    public List<String> brokerTrail(String queue, String deadLetterId) {
        return List.of("(SQS has no x-death; origin, reason and attempts travel as message attributes)");
    }

    @Override
    public void deleteQueue(String queue) {
        try {
            transport.deleteQueues(queue);
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
