package dev.idemkit.adapters.kafka;

import dev.idemkit.ports.out.DeliveryHandler;
import dev.idemkit.ports.out.LogPositions;
import dev.idemkit.ports.out.MessageTransport;
import dev.idemkit.ports.out.OutgoingMessage;
import dev.idemkit.ports.out.Subscription;
import dev.idemkit.ports.out.TransportException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * {@link MessageTransport} on Kafka. A "queue" is a work topic; its consumer group is
 * {@link KafkaSettings#group}; its retry and dead-letter topics are created with it on first use
 * ({@link KafkaTopics}). Publishing goes through an idempotent producer ({@code enable.idempotence=true},
 * {@code acks=all}) and returns when the broker acked. The message id travels in the {@code message_id} header;
 * the group id, when given, becomes the record key (one key, one partition, one order). Kafka has no broker-side
 * deduplication id: {@code OutgoingMessage.dedupId} is not used.
 */
public final class KafkaMessageTransport implements MessageTransport {
    private final KafkaSettings settings;
    private final Admin admin;
    private final KafkaProducer<byte[], byte[]> producer;
    private final KafkaTopics topics;
    private final KafkaDeadLetterQueue deadLetters;
    private final KafkaShareGroups shareGroups;
    private final List<Subscription> subscriptions = new CopyOnWriteArrayList<>();
    /** Where the inbox store keeps consumer positions (offsets in the database), or null: Kafka's commits only. */
    private final LogPositions positions;

    public KafkaMessageTransport(KafkaSettings settings) {
        this(settings, null);
    }

    /**
     * A transport whose consumer groups keep their positions in the inbox store's transactions too (docs/ARCHITECTURE.md
     * section 14: offsets in the database): each delivery reports where its partition stands once it is settled
     * ({@code Delivery.positionAfter}), the store writes that with the effect, and a consumer given a partition seeks to
     * the stored position when it is ahead of Kafka's committed offset, which stays committed after settle beside it.
     *
     * @param positions where the store's positions are read ({@code InboxStore.positions()}), or null for none
     * @throws IllegalArgumentException with positions on share consumption (a share group has no offsets to keep)
     */
    public KafkaMessageTransport(KafkaSettings settings, LogPositions positions) {
        if (positions != null && settings.consumption() == KafkaSettings.Consumption.SHARE) {
            throw new IllegalArgumentException("offsets in the database need a consumer group; a share group"
                    + " acknowledges each record to the broker and has no offsets to keep");
        }
        this.positions = positions;
        this.settings = settings;
        Properties a = new Properties();
        a.putAll(settings.clientProperties());
        a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers());
        this.admin = Admin.create(a);
        this.producer = new KafkaProducer<>(producerProperties(settings), new ByteArraySerializer(),
                new ByteArraySerializer());
        this.topics = new KafkaTopics(admin, settings);
        this.deadLetters = new KafkaDeadLetterQueue(settings, topics, producer);
        this.shareGroups = new KafkaShareGroups(admin);
    }

    /** Whether consumer positions are kept in the inbox store's transactions (offsets in the database). */
    public boolean keepsPositions() {
        return positions != null;
    }

    /** The producer idemkit ships: idempotent, {@code acks=all}; public so that a benchmark measures this one. */
    public static Properties producerProperties(KafkaSettings settings) {
        Properties p = new Properties();
        p.putAll(settings.clientProperties());
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers());
        // retransmissions within this producer's session are dropped by the broker: exactly-once PUBLISHING,
        // not processing (a new producer, or a crash before the ack, still duplicates: the inbox absorbs those)
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 1);
        int send = (int) settings.sendTimeout().toMillis();
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Math.max(1000, send / 2));
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Math.max(2001, send));
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (long) send);
        return p;
    }

    /**
     * Waits until a broker answers (its cluster id is read).
     *
     * @throws TransportException naming the bootstrap servers when none answered within {@code patience}
     */
    public void awaitBroker(Duration patience) {
        if (!anyBootstrapServerListens()) {
            // nothing accepts a connection at any address (a wrong port, no broker started): say so at once instead
            // of waiting out the admin client's retries
            throw new TransportException("no Kafka broker listens at " + settings.bootstrapServers()
                    + " (every address refused the connection)");
        }
        try {
            admin.describeCluster(new org.apache.kafka.clients.admin.DescribeClusterOptions()
                    .timeoutMs((int) patience.toMillis())).clusterId().get(patience.toMillis() + 1000,
                    TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new TransportException("no Kafka broker answered at " + settings.bootstrapServers() + " within "
                    + patience, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransportException("interrupted while waiting for Kafka at " + settings.bootstrapServers(), e);
        }
    }

    private boolean anyBootstrapServerListens() {
        for (String address : settings.bootstrapServers().split(",")) {
            String a = address.trim();
            int colon = a.lastIndexOf(':');
            if (colon < 0) {
                return true; // not host:port: let the client itself say what is wrong with it
            }
            try (java.net.Socket s = new java.net.Socket()) {
                s.connect(new java.net.InetSocketAddress(a.substring(0, colon), Integer.parseInt(a.substring(colon + 1))),
                        1_000);
                return true;
            } catch (java.net.ConnectException | java.net.UnknownHostException | IllegalArgumentException e) {
                // refused or unresolvable: try the next one
            } catch (java.io.IOException e) {
                return true; // silent or slow, not refused: the admin client's own wait decides
            }
        }
        return false;
    }

    public KafkaSettings settings() {
        return settings;
    }

    /** The idempotent producer every copy of this transport is written with (adopted deliveries' too). */
    KafkaProducer<byte[], byte[]> producer() {
        return producer;
    }

    /** The dead-letter topics of this transport's work topics. */
    public KafkaDeadLetterQueue deadLetters() {
        return deadLetters;
    }

    /**
     * A consumer of {@code queue} in its consumer group, or, with {@link KafkaSettings.Consumption#SHARE}, in its share
     * group (prepared first: it starts at the earliest record and reads committed records only) with the retry topics
     * in the consumer group.
     */
    @Override
    public Subscription subscribe(String queue, DeliveryHandler handler) {
        topics.ensure(queue);
        Subscription[] self = new Subscription[1];
        Runnable onClosed = () -> subscriptions.remove(self[0]);
        if (settings.consumption() == KafkaSettings.Consumption.SHARE) {
            String group = settings.shareGroup(queue);
            shareGroups.prepare(group, settings.group(queue), queue);
            KafkaShareSubscription s = new KafkaShareSubscription(queue, settings, handler, producer,
                    () -> shareGroups.deliveryCountLimit(group),
                    new KafkaSubscription(queue, settings, handler, producer, () -> { }, false, null), onClosed);
            self[0] = s;
            subscriptions.add(s);
            s.start();
            return s;
        }
        KafkaSubscription s = new KafkaSubscription(queue, settings, handler, producer, onClosed, true,
                positions == null ? null : new KafkaSubscription.Positions(positions, topics::ids));
        self[0] = s;
        subscriptions.add(s);
        s.start();
        return s;
    }

    @Override
    public void publish(String queue, OutgoingMessage message) {
        topics.ensure(queue);
        sendAndWait(producer, record(queue, message), settings.sendTimeout());
    }

    /**
     * The idempotent producer's own pipelining (up to 5 requests in flight per broker, order kept per partition); the
     * future completes on the broker's ack, from the producer's I/O thread.
     */
    @Override
    public java.util.concurrent.CompletableFuture<Void> publishAsync(String queue, OutgoingMessage message) {
        java.util.concurrent.CompletableFuture<Void> acked = new java.util.concurrent.CompletableFuture<>();
        try {
            topics.ensure(queue);
            producer.send(record(queue, message), (metadata, e) -> {
                if (e == null) {
                    acked.complete(null);
                } else {
                    acked.completeExceptionally(new TransportException("the broker did not ack the record for " + queue
                            + ": " + e, e));
                }
            });
        } catch (RuntimeException e) {
            acked.completeExceptionally(e instanceof TransportException ? e
                    : new TransportException("could not publish to " + queue + ": " + e, e));
        }
        return acked;
    }

    private static ProducerRecord<byte[], byte[]> record(String queue, OutgoingMessage message) {
        RecordHeaders headers = new RecordHeaders();
        message.headers().forEach((k, v) -> {
            if (!k.equals(KafkaWire.MESSAGE_ID)) {
                headers.add(k, KafkaWire.bytes(v));
            }
        });
        headers.add(KafkaWire.MESSAGE_ID, KafkaWire.bytes(message.id()));
        byte[] key = message.groupId().map(g -> g.getBytes(StandardCharsets.UTF_8)).orElse(null);
        return new ProducerRecord<>(queue, null, key, message.body(), headers);
    }

    /** Creates the topics of {@code queue} now (they are otherwise created on first use). */
    public void declare(String queue) {
        topics.ensure(queue);
    }

    /** Deletes a work topic with its retry and dead-letter topics, and its share group if it has one (tests, tear-down). */
    public void deleteTopics(String queue) {
        if (settings.consumption() == KafkaSettings.Consumption.SHARE) {
            shareGroups.delete(settings.shareGroup(queue)); // first: its state refers to the topic's partitions
        }
        topics.delete(queue);
    }

    static void sendAndWait(KafkaProducer<byte[], byte[]> producer, ProducerRecord<byte[], byte[]> record,
            Duration timeout) {
        try {
            producer.send(record).get(timeout.toMillis() + 5_000, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new TransportException("the broker did not ack the record for " + record.topic() + ": "
                    + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new TransportException("no ack for the record for " + record.topic() + " within " + timeout, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransportException("interrupted while publishing to " + record.topic(), e);
        } catch (RuntimeException e) {
            throw new TransportException("could not publish to " + record.topic() + ": " + e, e);
        }
    }

    @Override
    public void close() {
        subscriptions.forEach(Subscription::close);
        deadLetters.close();
        producer.close(Duration.ofSeconds(5));
        admin.close(Duration.ofSeconds(5));
    }
}
