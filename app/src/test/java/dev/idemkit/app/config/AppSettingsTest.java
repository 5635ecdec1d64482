package dev.idemkit.app.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Where settings come from (flag over environment over properties file over default) and how they are parsed. */
class AppSettingsTest {

    @Test
    void withNothingConfiguredTheDefaultsApply() {
        AppSettings s = AppSettings.resolve(new Sources(Map.of(), Map.of(), new Properties()));

        assertThat(s.store().kind()).isEqualTo(AppSettings.StoreKind.POSTGRES);
        assertThat(s.transport().kind()).isEqualTo(AppSettings.TransportKind.SQS);
        assertThat(s.store().postgres().url()).as("absent means the embedded PostgreSQL").isEmpty();
        assertThat(s.transport().sqsEndpoint()).as("absent means the embedded ElasticMQ").isEmpty();
        assertThat(s.store().postgres().schema()).isEqualTo("public");
        assertThat(s.transport().rabbitUri().toString()).isEqualTo("amqp://guest:guest@127.0.0.1:5672/%2F");
        assertThat(s.store().redis().url().toString()).isEqualTo("redis://127.0.0.1:6379");
        assertThat(s.store().redis().prefix()).isEqualTo("idemkit");
        assertThat(s.http().port()).isEqualTo(8080);
        assertThat(s.retry().maxAttempts()).isEqualTo(3);
        assertThat(s.store().inboxRetention()).isEqualTo(Duration.ofDays(7));
        assertThat(s.deadLetters().retention()).isEqualTo(Duration.ofDays(4));
        assertThat(s.http().apiKeys()).isEmpty();
        // retention's defaults are the store's own (config may name only the adapters' *Settings)
        dev.idemkit.adapters.postgres.PostgresRetention.Policy policy = dev.idemkit.adapters.postgres.PostgresRetention
                .Policy.defaults();
        assertThat(s.store().retention()).isEqualTo(new AppSettings.RetentionSettings(Duration.ofMinutes(10),
                policy.sentOutbox(), policy.batchSize(), policy.pause(), policy.dutyCycle()));
        assertThat(s.store().inboxRetention()).isEqualTo(policy.inbox());
    }

    @Test
    void aRetentionSettingOutsideItsBoundsIsRefusedNamingIt() {
        assertThatThrownBy(() -> AppSettings.resolve(sources("retention.duty-cycle", "1.5")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("retention.duty-cycle")
                .hasMessageContaining("expected a share in (0, 1] such as 0.1, got 1.5");
        assertThatThrownBy(() -> AppSettings.resolve(sources("retention.batch-size", "0")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("retention.batch-size");
        assertThatThrownBy(() -> AppSettings.resolve(sources("retention.every", "soon")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("retention.every");
        assertThat(AppSettings.resolve(sources("retention.every", "30s", "retention.pause", "5ms")).store().retention())
                .extracting(AppSettings.RetentionSettings::every, AppSettings.RetentionSettings::pause)
                .containsExactly(Duration.ofSeconds(30), Duration.ofMillis(5));
    }

    @Test
    void aFlagWinsOverTheEnvironmentWhichWinsOverTheFileWhichWinsOverTheDefault(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("idemkit.properties");
        Files.writeString(file, String.join("\n",
                "store=redis",
                "transport=rabbit",
                "pg.schema=from_file",
                "http.port=7001",
                "max.attempts=7"));
        Map<String, String> env = Map.of(
                "IDEMKIT_CONFIG", file.toString(),
                "IDEMKIT_PG_SCHEMA", "from_env",
                "IDEMKIT_HTTP_PORT", "7002");
        Map<String, String> flags = Map.of("http.port", "7003");

        AppSettings s = AppSettings.resolve(Sources.of(flags, env));

        assertThat(s.http().port()).as("flag over env and file").isEqualTo(7003);
        assertThat(s.store().postgres().schema()).as("env over file").isEqualTo("from_env");
        assertThat(s.retry().maxAttempts()).as("file over default").isEqualTo(7);
        assertThat(s.store().kind()).isEqualTo(AppSettings.StoreKind.REDIS);
        assertThat(s.transport().kind()).isEqualTo(AppSettings.TransportKind.RABBIT);
        assertThat(s.transport().concurrency()).as("default").isEqualTo(4);
    }

    @Test
    void theHttpServersLimitsHaveDefaultsAreReadFromEverySourceAndABadOneIsRefusedNamingIt() {
        AppSettings defaults = AppSettings.resolve(new Sources(Map.of(), Map.of(), new Properties()));
        Properties file = new Properties();
        file.setProperty("http.max-connections", "64");
        AppSettings s = AppSettings.resolve(new Sources(Map.of("http.header-timeout", "3s"),
                Map.of("IDEMKIT_HTTP_BODY_TIMEOUT", "500ms", "IDEMKIT_HTTP_WORKERS", "16"), file));

        assertThat(defaults.http().limits()).isEqualTo(AppSettings.HttpLimits.defaults());
        assertThat(s.http().limits()).isEqualTo(new AppSettings.HttpLimits(java.time.Duration.ofSeconds(3),
                java.time.Duration.ofMillis(500), java.time.Duration.ofSeconds(30), 64, 256 * 1024, 16));
        assertThatThrownBy(() -> AppSettings.resolve(new Sources(Map.of("http.max-body-bytes", "10"), Map.of(),
                new Properties()))).isInstanceOf(ConfigException.class).hasMessageContaining("http.max-body-bytes");
        assertThatThrownBy(() -> AppSettings.resolve(new Sources(Map.of("http.header-timeout", "0s"), Map.of(),
                new Properties()))).isInstanceOf(ConfigException.class).hasMessageContaining("http.header-timeout");
    }

    @Test
    void theConfigFlagWinsOverIdemkitConfig(@TempDir Path dir) throws IOException {
        Path fromFlag = dir.resolve("flag.properties");
        Path fromEnv = dir.resolve("env.properties");
        Files.writeString(fromFlag, "pg.schema=flag_file\n");
        Files.writeString(fromEnv, "pg.schema=env_file\n");

        AppSettings s = AppSettings.resolve(Sources.of(Map.of("config", fromFlag.toString()),
                Map.of("IDEMKIT_CONFIG", fromEnv.toString())));

        assertThat(s.store().postgres().schema()).isEqualTo("flag_file");
    }

    @Test
    void kafkaIsChosenByNameWithItsBootstrapServersAndABadServerListIsRefusedNamingTheSetting() {
        AppSettings s = AppSettings.resolve(new Sources(Map.of("transport", "kafka"),
                Map.of("IDEMKIT_KAFKA_BOOTSTRAP_SERVERS", "k1:9092,k2:19092"), new Properties()));
        assertThat(s.transport().kind()).isEqualTo(AppSettings.TransportKind.KAFKA);
        assertThat(s.transport().kafkaBootstrapServers()).isEqualTo("k1:9092,k2:19092");
        assertThat(AppSettings.resolve(new Sources(Map.of("transport", "kafka"), Map.of(), new Properties()))
                .transport().kafkaBootstrapServers()).isEqualTo("127.0.0.1:9092");

        for (String bad : new String[] {"k1", "k1:", "k1:99999", "k1:9092,", ":9092"}) {
            assertThatThrownBy(() -> AppSettings.resolve(new Sources(Map.of("kafka.bootstrap-servers", bad), Map.of(),
                    new Properties()))).as(bad).isInstanceOf(ConfigException.class)
                    .hasMessageContaining("kafka.bootstrap-servers").hasMessageContaining("host:port");
        }
        assertThatThrownBy(() -> AppSettings.resolve(new Sources(Map.of("transport", "nats"), Map.of(),
                new Properties()))).hasMessageContaining("rabbit or sqs or kafka");
    }

    @Test
    void kafkaConsumesThroughAConsumerGroupUnlessShareIsChosenAndAnUnknownWayIsRefusedNamingTheSetting() {
        assertThat(AppSettings.resolve(new Sources(Map.of("transport", "kafka"), Map.of(), new Properties()))
                .transport().kafkaConsumption()).isEqualTo(AppSettings.KafkaConsumption.GROUP);
        assertThat(AppSettings.resolve(new Sources(Map.of("transport", "kafka"),
                Map.of("IDEMKIT_KAFKA_CONSUMPTION", "share"), new Properties())).transport().kafkaConsumption())
                .isEqualTo(AppSettings.KafkaConsumption.SHARE);
        assertThatThrownBy(() -> AppSettings.resolve(new Sources(Map.of("kafka.consumption", "queue"), Map.of(),
                new Properties()))).isInstanceOf(ConfigException.class).hasMessageContaining("kafka.consumption")
                .hasMessageContaining("group or share");
    }

    @Test
    void kafkaOffsetsStayInKafkaUnlessTheDatabaseIsChosenWhichNeedsPostgresAndAConsumerGroup() {
        assertThat(AppSettings.resolve(new Sources(Map.of("transport", "kafka"), Map.of(), new Properties()))
                .transport().kafkaOffsets()).isEqualTo(AppSettings.KafkaOffsets.KAFKA);
        assertThat(AppSettings.resolve(new Sources(Map.of("transport", "kafka"),
                Map.of("IDEMKIT_KAFKA_OFFSETS", "database"), new Properties())).transport().kafkaOffsets())
                .isEqualTo(AppSettings.KafkaOffsets.DATABASE);
        assertThatThrownBy(() -> AppSettings.resolve(new Sources(Map.of("transport", "kafka", "store", "redis",
                "kafka.offsets", "database"), Map.of(), new Properties()))).isInstanceOf(ConfigException.class)
                .hasMessageContaining("kafka.offsets").hasMessageContaining("PostgreSQL store");
        assertThatThrownBy(() -> AppSettings.resolve(new Sources(Map.of("transport", "kafka", "kafka.consumption",
                "share", "kafka.offsets", "database"), Map.of(), new Properties()))).isInstanceOf(ConfigException.class)
                .hasMessageContaining("kafka.offsets").hasMessageContaining("kafka.consumption=group");
        assertThatThrownBy(() -> AppSettings.resolve(new Sources(Map.of("kafka.offsets", "zookeeper"), Map.of(),
                new Properties()))).isInstanceOf(ConfigException.class).hasMessageContaining("kafka.offsets")
                .hasMessageContaining("kafka or database");
    }

    @Test
    void aBlankValueCountsAsAbsentAndValuesAreStripped() {
        Sources s = new Sources(Map.of("store", "  ", "transport", " rabbit "), Map.of(), new Properties());

        assertThat(s.get("store")).isEmpty();
        assertThat(s.get("transport")).hasValue("rabbit");
        assertThat(AppSettings.resolve(s).store().kind()).isEqualTo(AppSettings.StoreKind.POSTGRES);
    }

    @Test
    void environmentNamesFollowTheSettingNames() {
        assertThat(Sources.envName("pg.url")).isEqualTo("IDEMKIT_PG_URL");
        assertThat(Sources.envName("dlq.alert.threshold")).isEqualTo("IDEMKIT_DLQ_ALERT_THRESHOLD");
    }

    @Test
    void enumValuesIgnoreCase() {
        AppSettings s = resolve("store", "Redis", "transport", "RABBIT");

        assertThat(s.store().kind()).isEqualTo(AppSettings.StoreKind.REDIS);
        assertThat(s.transport().kind()).isEqualTo(AppSettings.TransportKind.RABBIT);
    }

    @Test
    void apiKeysAreClientEqualsKeyPairs() {
        AppSettings s = resolve("api.keys", "client-a=key-aaaaaaaa, client-b = key-bbbbbbbb");

        assertThat(s.http().apiKeys()).containsExactlyInAnyOrderEntriesOf(Map.of("client-a", "key-aaaaaaaa",
                "client-b", "key-bbbbbbbb"));
    }

    @Test
    void operatorKeysAreOperatorEqualsKeyPairsAndNeverAClientsKey() {
        AppSettings s = resolve("operator.keys", "ana=op-key-aaaaaaaa,bo=op-key-bbbbbbbb", "api.keys",
                "client-a=key-aaaaaaaa");
        assertThat(s.http().operatorKeys()).containsExactlyInAnyOrderEntriesOf(Map.of("ana", "op-key-aaaaaaaa",
                "bo", "op-key-bbbbbbbb"));

        assertThatThrownBy(() -> resolve("operator.keys", "ana=key-aaaaaaaa", "api.keys", "client-a=key-aaaaaaaa"))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.setting()).isEqualTo("operator.keys"));
        assertThatThrownBy(() -> resolve("operator.keys", "ana=short")).isInstanceOf(ConfigException.class);
    }

    @Test
    void awsAsTheSqsEndpointMeansTheRealService() {
        assertThat(resolve("sqs.endpoint", "AWS").transport().sqsEndpoint()).hasValue(AppSettings.AWS);
        assertThat(resolve("sqs.endpoint", "http://127.0.0.1:9324").transport().sqsEndpoint()).hasValue("http://127.0.0.1:9324");
    }

    @Test
    void theRedisAdaptersOwnOptionsAreResolvedHereFromTheEnvironmentTheAppWasGivenAndShownWithoutValues() {
        Map<String, String> env = Map.of("IDEMKIT_REDIS_PASSWORD", "redis-secret", "IDEMKIT_REDIS_DATABASE", "3",
                "IDEMKIT_UNRELATED", "x");
        AppSettings s = AppSettings.resolve(Sources.of(Map.of(), env));

        assertThat(s.store().redis().adapterOptions()).containsExactlyInAnyOrderEntriesOf(Map.of(
                "IDEMKIT_REDIS_PASSWORD", "redis-secret", "IDEMKIT_REDIS_DATABASE", "3"));
        assertThat(s.toString()).doesNotContain("redis-secret");
        assertThat(AppSettings.resolve(Sources.of(Map.of(), Map.of())).store().redis().adapterOptions())
                .as("nothing from the process environment unless the app was given it").isEmpty();
    }

    @Test
    void aBadRedisAdapterOptionIsAConfigurationErrorNamingIt() {
        assertThatThrownBy(() -> resolve("redis.database", "abc")).isInstanceOf(ConfigException.class)
                .hasMessageContaining("'redis.database'");
        assertThatThrownBy(() -> resolve("redis.topology", "clustr")).isInstanceOf(ConfigException.class)
                .hasMessageContaining("'redis.topology'");
        assertThatThrownBy(() -> resolve("redis.lease.ms", "0")).isInstanceOf(ConfigException.class)
                .hasMessageContaining("'redis.lease.ms'");
    }

    @Test
    void theRabbitAdaptersOwnOptionsArePassedOnUnderTheirVariableNames() {
        AppSettings s = resolve("rabbit.queue-type", "classic", "rabbit.addresses", "n1:5681, n2:5682",
                "rabbit.delivery-limit", "9", "max.attempts", "4", "rabbit.prefetch", "1");
        assertThat(s.transport().rabbitOptions()).containsExactlyInAnyOrderEntriesOf(Map.of(
                "IDEMKIT_RABBIT_QUEUE_TYPE", "classic", "IDEMKIT_RABBIT_ADDRESSES", "n1:5681,n2:5682",
                "IDEMKIT_RABBIT_DELIVERY_LIMIT", "9", "IDEMKIT_RABBIT_PREFETCH", "1"));
        assertThat(resolve().transport().rabbitOptions()).as("defaults are the adapter's").isEmpty();
        assertThat(resolve("rabbit.delivery-limit", "2", "max.attempts", "6").transport().rabbitOptions())
                .as("independent of the attempts").containsEntry("IDEMKIT_RABBIT_DELIVERY_LIMIT", "2");
    }

    @Test
    void thePostgresPoolSizeIsASettingWith32ByDefault() {
        assertThat(resolve().store().postgres().poolSize()).isEqualTo(32);
        assertThat(resolve("pg.pool.size", "8").store().postgres().poolSize()).isEqualTo(8);
    }

    @Test
    void eachConcernCopiesOnItsOwn() {
        AppSettings s = resolve("transport", "rabbit", "pg.schema", "orders");
        AppSettings onSqs = s.withTransport(s.transport().withKind(AppSettings.TransportKind.SQS));

        assertThat(onSqs.transport().kind()).isEqualTo(AppSettings.TransportKind.SQS);
        assertThat(onSqs.transport().rabbitUri()).isEqualTo(s.transport().rabbitUri());
        assertThat(onSqs.store()).isEqualTo(s.store());
        assertThat(onSqs.store().postgres().schema()).isEqualTo("orders");
        assertThat(onSqs.retry()).isEqualTo(s.retry());
    }

    @Test
    void toStringShowsNoPassword() {
        AppSettings s = resolve("pg.password", "pg-secret", "rabbit.uri", "amqp://user:rabbit-secret@host:5672/%2F",
                "api.keys", "a=key-secret-1");

        assertThat(s.toString()).doesNotContain("pg-secret", "rabbit-secret", "key-secret-1").contains("***");
    }

    @ParameterizedTest
    @CsvSource({
        "500ms, PT0.5S",
        "30s,   PT30S",
        "5m,    PT5M",
        "24h,   PT24H",
        "7d,    PT168H",
        "PT1S,  PT1S",
        "pt90s, PT1M30S",
        "P7D,   PT168H",
        "10S,   PT10S"})
    void durationsAreANumberWithAUnitOrIso8601(String text, String iso) {
        assertThat(AppSettings.duration(sources("inbox.retention", text), "inbox.retention", Duration.ZERO))
                .isEqualTo(Duration.parse(iso));
    }

    @Test
    void anAbsentDurationIsTheDefault() {
        assertThat(AppSettings.duration(sources(), "inbox.retention", Duration.ofDays(7))).isEqualTo(Duration.ofDays(7));
    }

    @ParameterizedTest
    @ValueSource(strings = {"0s", "-5s", "5x", "s", "ms", "five minutes", "PT", "P-1D", "1.5h", "99999999999999999999d", "999999999999999d"})
    void aZeroNegativeOrUnreadableDurationNamesTheSetting(String text) {
        assertThatThrownBy(() -> AppSettings.duration(sources("backoff.cap", text), "backoff.cap", Duration.ZERO))
                .isInstanceOfSatisfying(ConfigException.class, e -> {
                    assertThat(e.setting()).isEqualTo("backoff.cap");
                    assertThat(e.getMessage()).contains("--backoff-cap", "IDEMKIT_BACKOFF_CAP");
                });
    }

    @ParameterizedTest
    @CsvSource({
        "pg.url,         mysql://x",
        "pg.url,         postgresql://127.0.0.1/test",
        "rabbit.uri,     http://x",
        "rabbit.uri,     amqp://",
        "redis.url,      localhost:6379",
        "redis.prefix,   'has a space'",
        "redis.prefix,   'a:b'",
        "sqs.endpoint,   ftp://x",
        "pg.schema,      Bad-Schema",
        "pg.pool.size,   0",
        "pg.pool.size,   many",
        "store,          mysql",
        "transport,      nats",
        "http.port,      -1",
        "http.port,      65536",
        "max.attempts,   0",
        "concurrency,    many",
        "api.keys,       nokey",
        "api.keys,       a=short",
        "api.keys,       'a b=key-aaaaaaaa'",
        "rabbit.queue-type, stream",
        "rabbit.addresses, 'node1,node2'",
        "rabbit.addresses, amqp://node1:5672",
        "rabbit.delivery-limit, 0",
        "rabbit.delivery-limit, lots",
        "rabbit.prefetch, 0"})
    void aBadValueIsAConfigExceptionNamingItsSetting(String setting, String value) {
        assertThatThrownBy(() -> resolve(setting, value))
                .isInstanceOfSatisfying(ConfigException.class, e -> {
                    assertThat(e.setting()).isEqualTo(setting);
                    assertThat(e.getMessage()).startsWith("invalid setting '" + setting + "'")
                            .contains(Sources.envName(setting));
                });
    }

    @Test
    void aMissingPropertiesFileNamesTheConfigSetting(@TempDir Path dir) {
        assertThatThrownBy(() -> Sources.of(Map.of(), Map.of("IDEMKIT_CONFIG", dir.resolve("none").toString())))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.setting()).isEqualTo("config"));
    }

    private static AppSettings resolve(String... pairs) {
        return AppSettings.resolve(sources(pairs));
    }

    /** Name/value pairs as flags. */
    private static Sources sources(String... pairs) {
        Map<String, String> flags = new java.util.HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            flags.put(pairs[i], pairs[i + 1]);
        }
        return new Sources(flags, Map.of(), new Properties());
    }
}
