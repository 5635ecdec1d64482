package dev.idemkit.app.crash;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.idemkit.app.TestEnvironment;
import dev.idemkit.app.json.CanonicalJson;
import dev.idemkit.testsupport.ChildJvm;
import dev.idemkit.testsupport.TestRabbit;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * The payments API on the Redis store, {@code serve} SIGKILLed in the middle of a request (docs/ARCHITECTURE.md
 * section 12): once after the ledger charged and before the response was stored with the Idempotency-Key, once after
 * it was stored and before the client had its answer. The client retries with the same key after the restart (the
 * killed request's claim lapsed: its lease is brought forward to now, which is what waiting out the 60 s lease does).
 * Either way the account holds exactly one payment, and the retry's answer names it.
 *
 * <p>Before the charge was staged in the claim's unit of work (charge, stored response and the claim's end were three
 * steps), the first kill left a payment behind an unfinished claim and the retry charged a second time.
 */
class PaymentsCrashIT {
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private static final String CLIENT = "a"; // IDEMKIT_API_KEYS names client a for CLIENT_A_KEY
    private final String prefix = "it-pay-crash-" + UUID.randomUUID().toString().substring(0, 8);
    private final String account = "acc-" + UUID.randomUUID().toString().substring(0, 8);
    private TestRabbit.Vhost vhost;
    private RedissonClient redis;
    private ChildJvm serve;
    private URI base;

    @BeforeEach
    void connect() throws Exception {
        vhost = new TestRabbit.Vhost();
        Config config = new Config();
        config.useSingleServer().setAddress(TestEnvironment.REDIS_URL);
        redis = Redisson.create(config);
    }

    @AfterEach
    void cleanUp() throws Exception {
        try {
            if (serve != null) {
                serve.close();
            }
            redis.getKeys().deleteByPattern(prefix + ":*");
        } finally {
            redis.shutdown();
            vhost.close();
        }
    }

    @ParameterizedTest
    @EnumSource(value = CrashPoint.class, names = {"PAYMENT_CHARGED_BEFORE_STORED", "PAYMENT_STORED_BEFORE_ANSWER"})
    void serveKilledMidRequestAndTheSameKeyRetriedChargesExactlyOnce(CrashPoint point) throws Exception {
        String key = "pay-" + UUID.randomUUID();
        byte[] body = ("{\"amount\": 150.00, \"currency\": \"BRL\", \"account_id\": \"" + account + "\"}")
                .getBytes(StandardCharsets.UTF_8);

        startServe(point, "payments-" + point.name().toLowerCase() + "-1");
        CompletableFuture<HttpResponse<byte[]>> cut = HTTP.sendAsync(post(key, body),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(serve.awaitLine("CRASH-POINT " + point, Duration.ofSeconds(30)))
                .as("serve reached %s; log %s", point, serve.log()).isPresent();
        assertThat(serve.kill()).isEqualTo(ChildJvm.SIGKILLED);
        assertThat(cut).failsWithin(Duration.ofSeconds(10)); // the answer never came

        Map<String, String> record = redis.<String, String>getMap(recordKey(key), StringCodec.INSTANCE).readAllMap();
        Set<String> charged = payments();
        if (point == CrashPoint.PAYMENT_CHARGED_BEFORE_STORED) {
            assertThat(record.get("s")).as("the claim, unfinished").isEqualTo("P");
            assertThat(charged).as("a charge behind an unfinished claim would be charged again by the retry").isEmpty();
            // the killed request's lease runs out now instead of in 60 s: what waiting it out does, on Redis' clock
            redis.getBucket(recordKey(key), StringCodec.INSTANCE).expire(Duration.ofMillis(1));
        } else {
            assertThat(record.get("s")).as("the record, completed").isEqualTo("C");
            assertThat(charged).hasSize(1);
        }

        startServe(null, "payments-" + point.name().toLowerCase() + "-2");
        HttpResponse<byte[]> retry = HTTP.send(post(key, body), HttpResponse.BodyHandlers.ofByteArray());

        assertThat(retry.statusCode()).as(new String(retry.body(), StandardCharsets.UTF_8)).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed").isPresent())
                .as("replayed").isEqualTo(point == CrashPoint.PAYMENT_STORED_BEFORE_ANSWER);
        JsonNode payment = CanonicalJson.MAPPER.readTree(retry.body());
        assertThat(payments()).as("the account's payments").containsExactly(payment.get("id").asText());
    }

    /** Starts serve on Redis, armed at {@code armed} (null: not armed). */
    private void startServe(CrashPoint armed, String log) throws Exception {
        Map<String, String> env = new HashMap<>(TestEnvironment.settings("public", "IDEMKIT_STORE", "redis",
                "IDEMKIT_REDIS_PREFIX", prefix, "IDEMKIT_RABBIT_URI", vhost.uri(), "IDEMKIT_HTTP_PORT", "0",
                "IDEMKIT_RABBIT_QUEUE_TYPE", "classic"));
        Map<String, String> props = armed == null ? Map.<String, String>of() : Map.of("idemkit.crash.point",
                armed.name());
        serve = CrashJvms.start(ServeChild.class.getName(), List.of("serve"), props, env, log);
        String line = serve.awaitLine("idemkit HTTP on ", Duration.ofSeconds(90)).orElseThrow(() ->
                new IllegalStateException("serve did not start; log: " + serve.log()));
        String url = line.substring("idemkit HTTP on ".length()).split("\\s+")[0];
        base = URI.create(url.replace("localhost", "127.0.0.1"));
    }

    private HttpRequest post(String key, byte[] body) {
        return HttpRequest.newBuilder(base.resolve("/payments")).timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + TestEnvironment.CLIENT_A_KEY).header("Idempotency-Key", key)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
    }

    private Set<String> payments() {
        return Set.copyOf(redis.<String>getSet(prefix + ":app:account-payments:" + account, StringCodec.INSTANCE)
                .readAll());
    }

    /** The Idempotency-Key record of client a's {@code key} (the Redis adapter's key layout). */
    private String recordKey(String key) {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        return prefix + ":idem:{" + b64.encodeToString(CLIENT.getBytes(StandardCharsets.US_ASCII)) + "."
                + b64.encodeToString(key.getBytes(StandardCharsets.US_ASCII)) + "}";
    }
}
