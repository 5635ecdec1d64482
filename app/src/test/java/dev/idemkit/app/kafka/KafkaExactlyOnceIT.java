package dev.idemkit.app.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.adapters.kafka.KafkaBroker;
import dev.idemkit.adapters.postgres.JpaUnitOfWork;
import dev.idemkit.adapters.postgres.PostgresDatabase;
import dev.idemkit.adapters.postgres.PostgresInboxStore;
import dev.idemkit.adapters.postgres.PostgresSettings;
import dev.idemkit.app.TestEnvironment;
import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxKey;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the source document says about exactly-once and Kafka, shown on a real broker and a real PostgreSQL.
 * A transactional consume-transform-produce ({@code sendOffsetsToTransaction}, read by {@code read_committed}) is
 * atomic inside Kafka: a run that dies before its commit (here: its sends acknowledged, then aborted) leaves nothing
 * visible to {@code read_committed} and no offset moved,
 * and the rerun produces each record once. A PostgreSQL write beside it is not in that transaction ("você volta ao
 * problema do dual write"): the dead run's rows stay and the rerun writes them again. The same write through the
 * inbox, keyed by the record's {@code message_id} in the effect's own transaction, is applied once.
 */
// full tier: it shows what a Kafka transaction does and does not cover (a demonstration, 20-25 s); the inbox on Kafka
// is held in verify by CrashHarnessIT's PG_KAFKA chain (every consumer point killed) and DemoIT's Kafka exercises
@org.junit.jupiter.api.Tag("slow")
class KafkaExactlyOnceIT {
    private static final int RECORDS = 5;

    private String schema;
    private PostgresDatabase db;
    private Admin admin;
    private String in;
    private String out;

    @BeforeEach
    void topicsAndSchema() throws Exception {
        schema = TestEnvironment.unique("kafka_eos");
        db = PostgresDatabase.builder(PostgresSettings.fromEnvironment().withSchema(schema).withPoolSize(2))
                .schemaCheck(PostgresDatabase.SchemaCheck.NONE).start();
        try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE shipments (message_id text NOT NULL)");
            c.commit();
        }
        admin = Admin.create(Map.of("bootstrap.servers", KafkaBroker.shared().bootstrapServers()));
        String tag = UUID.randomUUID().toString().substring(0, 8);
        in = "eos-in-" + tag;
        out = "eos-out-" + tag;
        admin.createTopics(List.of(new NewTopic(in, 1, (short) 1), new NewTopic(out, 1, (short) 1))).all()
                .get(30, TimeUnit.SECONDS);
        try (KafkaProducer<byte[], byte[]> p = producer(null)) {
            for (int i = 1; i <= RECORDS; i++) {
                ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(in, ("order " + i).getBytes(StandardCharsets.UTF_8));
                r.headers().add("message_id", ("m-" + i).getBytes(StandardCharsets.UTF_8));
                p.send(r).get();
            }
        }
    }

    @AfterEach
    void cleanUp() throws Exception {
        admin.deleteTopics(List.of(in, out)).all().get(30, TimeUnit.SECONDS);
        admin.close();
        db.close();
        TestEnvironment.dropSchema(schema);
    }

    @Test
    void aKafkaTransactionIsAtomicInsideKafkaButAPostgresWriteBesideItIsADualWrite() throws Exception {
        String group = "eos-plain-" + UUID.randomUUID();
        consumeTransformProduce(group, false, false); // dies before its commit
        assertThat(readOut("read_committed")).as("a dead transaction shows nothing to read_committed").isEmpty();
        assertThat(committed(group)).as("nor moves the group's offset").isNull();
        assertThat(rows()).as("but its PostgreSQL rows stay: the dual write").isEqualTo(RECORDS);

        consumeTransformProduce(group, false, true);
        assertThat(readOut("read_committed")).as("each record produced once").hasSize(RECORDS);
        assertThat(readOut("read_uncommitted")).as("the aborted copies are in the log, never read committed")
                .hasSize(2 * RECORDS);
        assertThat(committed(group)).isEqualTo(RECORDS);
        assertThat(rows()).as("the effect beside the transaction ran twice").isEqualTo(2 * RECORDS);
    }

    @Test
    void theSameEffectThroughTheInboxIsAppliedOnceAcrossTheDeadRun() throws Exception {
        String group = "eos-inbox-" + UUID.randomUUID();
        List<Outcome> first = consumeTransformProduce(group, true, false);
        List<Outcome> second = consumeTransformProduce(group, true, true);

        assertThat(first).containsOnly(Outcome.PROCESSED);
        assertThat(second).as("the rerun finds every key recorded").containsOnly(Outcome.DUPLICATE).hasSize(RECORDS);
        assertThat(rows()).as("one row per record").isEqualTo(RECORDS);
        assertThat(readOut("read_committed")).hasSize(RECORDS);
    }

    /**
     * One run: read {@code in} from the group's offset, per record write a shipment row (beside the transaction, or
     * through the inbox) and produce to {@code out}, send the offsets to the transaction, then commit or abort.
     */
    private List<Outcome> consumeTransformProduce(String group, boolean inbox, boolean commit) throws Exception {
        PostgresInboxStore store = new PostgresInboxStore(db);
        List<Outcome> outcomes = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(group, "read_committed");
                KafkaProducer<byte[], byte[]> producer = producer("eos-" + group)) {
            producer.initTransactions();
            consumer.subscribe(List.of(in));
            List<ConsumerRecord<byte[], byte[]>> batch = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (batch.size() < RECORDS && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(batch::add);
            }
            assertThat(batch).hasSize(RECORDS);
            producer.beginTransaction();
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (ConsumerRecord<byte[], byte[]> r : batch) {
                String id = new String(r.headers().lastHeader("message_id").value(), StandardCharsets.UTF_8);
                if (inbox) {
                    outcomes.add(store.runOnce(InboxKey.of("shipping", id), Fingerprint.of(r.value()),
                            (JpaUnitOfWork work) -> insert(work.connection(), id)).outcome());
                } else {
                    try (Connection c = db.dataSource().getConnection()) {
                        insert(c, id);
                        c.commit();
                    }
                }
                sent.add(producer.send(new ProducerRecord<>(out, r.key(), r.value())));
                offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
            }
            producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
            if (commit) {
                producer.commitTransaction();
            } else {
                // The run that "dies" does so after its sends reached the log (each acknowledged, acks=all) and
                // before its commit. Kafka promises nothing about sends still in the producer's buffer when a
                // transaction aborts (they may never be written), so the test waits for every acknowledgement
                // first: then the aborted copies are in the log for certain, and read_committed must hide them.
                for (Future<RecordMetadata> f : sent) {
                    f.get(30, TimeUnit.SECONDS);
                }
                producer.abortTransaction();
            }
        }
        return outcomes;
    }

    private static int insert(Connection c, String id) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO shipments (message_id) VALUES (?)")) {
            ps.setString(1, id);
            return ps.executeUpdate();
        }
    }

    private int rows() throws Exception {
        try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM shipments")) {
            rs.next();
            int n = rs.getInt(1);
            c.rollback();
            return n;
        }
    }

    private List<String> readOut(String isolation) {
        List<String> seen = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = consumer(null, isolation)) {
            TopicPartition tp = new TopicPartition(out, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long end = c.endOffsets(List.of(tp)).get(tp);
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (c.position(tp) < end && System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(r -> seen.add(new String(r.value(), StandardCharsets.UTF_8)));
            }
        }
        return seen;
    }

    private Long committed(String group) throws Exception {
        OffsetAndMetadata o = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                .get(30, TimeUnit.SECONDS).get(new TopicPartition(in, 0));
        return o == null ? null : o.offset();
    }

    private static KafkaConsumer<byte[], byte[]> consumer(String group, String isolation) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaBroker.shared().bootstrapServers());
        if (group != null) {
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        }
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    private static KafkaProducer<byte[], byte[]> producer(String transactionalId) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaBroker.shared().bootstrapServers());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        if (transactionalId != null) {
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        }
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }
}
