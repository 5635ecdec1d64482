package dev.idemkit.app.http;

import static dev.idemkit.app.TestEnvironment.CLIENT_A_KEY;
import static dev.idemkit.app.TestEnvironment.CLIENT_B_KEY;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.idemkit.app.TestEnvironment;
import dev.idemkit.app.config.AppSettings;
import dev.idemkit.app.config.Sources;
import dev.idemkit.app.json.CanonicalJson;
import dev.idemkit.app.wiring.Assembly;
import dev.idemkit.adapters.redis.RedisSettings;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Exercise 2 literally, against the real HTTP server, the real PostgreSQL store (and once Redis):
 * {@code POST /payments} with the seed's body and an Idempotency-Key.
 */
class PaymentsApiIT {
    private static final int PARALLEL = 100;
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private static String schema;
    private static Assembly assembly;
    private static ApiServer api;
    private static URI base;

    @BeforeAll
    static void start() throws Exception {
        schema = TestEnvironment.unique("app_it_pay");
        assembly = Assembly.start(AppSettings.resolve(Sources.of(Map.of(), TestEnvironment.settings(schema))));
        api = startApi(assembly);
        base = URI.create("http://127.0.0.1:" + api.port());
    }

    @AfterAll
    static void stop() throws Exception {
        if (api != null) {
            api.close();
        }
        if (assembly != null) {
            assembly.close();
        }
        TestEnvironment.dropSchema(schema);
    }

    /** As {@code serve} builds it, on a free port. */
    private static ApiServer startApi(Assembly a) throws java.io.IOException {
        return ApiServer.start(new InetSocketAddress("127.0.0.1", 0), new PaymentsApi(a.paymentCharger(),
                a.store().ledger(), ApiKeys.of(a.settings().http().apiKeys()), a.metrics(),
                () -> Map.of("store", a.store().health())));
    }

    @Test
    void hundredParallelPostsWithOneKeyChargeOnceAndAllAnswerLikeTheFirst() throws Exception {
        String account = "acc-" + UUID.randomUUID();
        List<HttpResponse<byte[]>> responses = parallelSameKey(base, CLIENT_A_KEY, account);

        assertThat(paymentRows(account)).isEqualTo(1);
        assertSameAnswerOnce(responses);
    }

    @Test
    void theRedisStoreAlsoChargesOnceForHundredParallelPostsWithOneKey() throws Exception {
        String client = TestEnvironment.unique("redis-it");
        String apiKey = "key-" + UUID.randomUUID();
        String account = "acc-" + UUID.randomUUID();
        Map<String, String> env = TestEnvironment.settings(schema, "IDEMKIT_STORE", "redis",
                "IDEMKIT_API_KEYS", client + "=" + apiKey);
        List<HttpResponse<byte[]>> responses;
        long charges;
        try (Assembly redis = Assembly.start(AppSettings.resolve(Sources.of(Map.of(), env)));
                ApiServer redisApi = startApi(redis)) {
            assertThat(redis.store().describe()).startsWith("Redis");
            URI redisBase = URI.create("http://127.0.0.1:" + redisApi.port());
            responses = parallelSameKey(redisBase, apiKey, account);
            charges = redis.store().ledger().forAccount(dev.idemkit.domain.httpkey.ClientId.of(client), account, 10)
                    .size();
            cleanUpRedis(client, responses);
        }
        assertThat(charges).isEqualTo(1);
        assertSameAnswerOnce(responses);
    }

    @Test
    void theSameKeyWithAnotherBodyIsRefusedWith422AndChargesNothingMore() throws Exception {
        String account = "acc-" + UUID.randomUUID();
        String key = UUID.randomUUID().toString();
        HttpResponse<byte[]> first = post(base, CLIENT_A_KEY, key, seedBody(account, "150.00"));
        HttpResponse<byte[]> other = post(base, CLIENT_A_KEY, key, seedBody(account, "151.00"));

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(other.statusCode()).isEqualTo(422);
        assertThat(other.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(json(other).get("status").asInt()).isEqualTo(422);
        assertThat(other.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(other.headers().firstValue("Link")).hasValue(PaymentsApi.POLICY_LINK);
        assertThat(first.headers().firstValue("Link")).as("only problems link to the policy").isEmpty();
        assertThat(paymentRows(account)).isEqualTo(1);
    }

    /** The draft: a resource that expires keys publishes its expiration policy; the problems link to it. */
    @Test
    void theIdempotencyPolicyPageIsPublicAndStatesTheRetentionAndLeaseInUse() throws Exception {
        HttpResponse<byte[]> page = send(HttpRequest.newBuilder(base.resolve("/idempotency")).GET());

        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("Content-Type")).hasValue("text/html; charset=utf-8");
        String html = new String(page.body(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(html).contains("kept for <b>24 hours</b>", "at most <b>1 minute</b>", "Retry-After", "set-cookie");
    }

    @Test
    void keyOrderAndSpacingDoNotMakeAnotherRequest() throws Exception {
        String account = "acc-" + UUID.randomUUID();
        String key = UUID.randomUUID().toString();
        HttpResponse<byte[]> first = post(base, CLIENT_A_KEY, key, seedBody(account, "150.00"));
        byte[] reordered = ("{ \"account_id\" : \"" + account + "\",\n \"currency\":\"BRL\", \"amount\":150.00 }")
                .getBytes(StandardCharsets.UTF_8);
        HttpResponse<byte[]> retry = post(base, CLIENT_A_KEY, key, reordered);

        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(paymentRows(account)).isEqualTo(1);
    }

    @Test
    void aReplayCarriesIdempotentReplayedAndTheOriginalDoesNot() throws Exception {
        String account = "acc-" + UUID.randomUUID();
        String key = UUID.randomUUID().toString();
        HttpResponse<byte[]> first = post(base, CLIENT_A_KEY, key, seedBody(account, "150.00"));
        HttpResponse<byte[]> replay = post(base, CLIENT_A_KEY, key, seedBody(account, "150.00"));

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(replay.statusCode()).isEqualTo(201);
        assertThat(replay.body()).isEqualTo(first.body());
        assertThat(replay.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
        JsonNode payment = json(first);
        assertThat(payment.get("amount").decimalValue().toPlainString()).isEqualTo("150.00");
        assertThat(payment.get("currency").asText()).isEqualTo("BRL");
        assertThat(payment.get("account_id").asText()).isEqualTo(account);
    }

    @Test
    void listingAnAccountShowsThisClientsPaymentsOnlyAndRefusesAMissingAccount() throws Exception {
        String account = "acc-" + UUID.randomUUID();
        HttpResponse<byte[]> a1 = post(base, CLIENT_A_KEY, UUID.randomUUID().toString(), seedBody(account, "1.00"));
        HttpResponse<byte[]> a2 = post(base, CLIENT_A_KEY, UUID.randomUUID().toString(), seedBody(account, "2.00"));
        HttpResponse<byte[]> b1 = post(base, CLIENT_B_KEY, UUID.randomUUID().toString(), seedBody(account, "3.00"));
        assertThat(List.of(a1.statusCode(), a2.statusCode(), b1.statusCode())).containsOnly(201);

        HttpResponse<byte[]> listA = list(CLIENT_A_KEY, "account_id=" + account);
        HttpResponse<byte[]> listB = list(CLIENT_B_KEY, "account_id=" + account);
        HttpResponse<byte[]> missing = list(CLIENT_A_KEY, "other=x");

        assertThat(listA.statusCode()).isEqualTo(200);
        List<String> idsA = new java.util.ArrayList<>();
        json(listA).get("payments").forEach(p -> idsA.add(p.get("id").asText()));
        assertThat(idsA).containsExactly(json(a1).get("id").asText(), json(a2).get("id").asText());
        assertThat(json(listB).get("payments")).hasSize(1);
        assertThat(json(listB).get("payments").get(0).get("id").asText()).isEqualTo(json(b1).get("id").asText());
        assertThat(missing.statusCode()).isEqualTo(400);
        assertThat(json(missing).get("status").asInt()).isEqualTo(400);
    }

    private static HttpResponse<byte[]> list(String apiKey, String query) throws Exception {
        return send(HttpRequest.newBuilder(base.resolve("/payments?" + query)).header("Authorization", "Bearer " + apiKey)
                .GET());
    }

    @Test
    void twoClientsWithTheSameKeyValueGetTwoIndependentChargesAndCannotReadEachOther() throws Exception {
        String account = "acc-" + UUID.randomUUID();
        String shared = "shared-" + UUID.randomUUID();
        byte[] body = seedBody(account, "150.00");
        HttpResponse<byte[]> a = post(base, CLIENT_A_KEY, shared, body);
        HttpResponse<byte[]> b = post(base, CLIENT_B_KEY, shared, body);

        assertThat(a.statusCode()).isEqualTo(201);
        assertThat(b.statusCode()).isEqualTo(201);
        assertThat(b.headers().firstValue("Idempotent-Replayed")).as("b must not get a's stored response").isEmpty();
        String paymentA = json(a).get("id").asText();
        String paymentB = json(b).get("id").asText();
        assertThat(paymentA).isNotEqualTo(paymentB);
        assertThat(b.body()).isNotEqualTo(a.body());
        assertThat(paymentRows(account)).isEqualTo(2);

        assertThat(get(base, CLIENT_A_KEY, paymentA).statusCode()).isEqualTo(200);
        assertThat(json(get(base, CLIENT_B_KEY, paymentB)).get("id").asText()).isEqualTo(paymentB);
        HttpResponse<byte[]> bReadsA = get(base, CLIENT_B_KEY, paymentA);
        HttpResponse<byte[]> aReadsB = get(base, CLIENT_A_KEY, paymentB);
        assertThat(bReadsA.statusCode()).isEqualTo(404);
        assertThat(aReadsB.statusCode()).isEqualTo(404);
        assertThat(new String(bReadsA.body(), StandardCharsets.UTF_8)).doesNotContain(account);

        HttpResponse<byte[]> aAgain = post(base, CLIENT_A_KEY, shared, body);
        assertThat(aAgain.body()).isEqualTo(a.body());
        assertThat(paymentRows(account)).isEqualTo(2);
    }

    @Test
    void aMissingOrUnknownCredentialIs401AndChargesNothing() throws Exception {
        String account = "acc-" + UUID.randomUUID();
        byte[] body = seedBody(account, "150.00");
        HttpResponse<byte[]> none = send(HttpRequest.newBuilder(base.resolve("/payments"))
                .header("Idempotency-Key", UUID.randomUUID().toString())
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)));
        HttpResponse<byte[]> unknown = post(base, "key-unknown-000", UUID.randomUUID().toString(), body);
        HttpResponse<byte[]> notBearer = send(HttpRequest.newBuilder(base.resolve("/payments"))
                .header("Authorization", "Basic " + CLIENT_A_KEY)
                .header("Idempotency-Key", UUID.randomUUID().toString())
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)));
        HttpResponse<byte[]> readWithout = send(HttpRequest.newBuilder(base.resolve("/payments/pay_x")).GET());

        for (HttpResponse<byte[]> r : List.of(none, unknown, notBearer, readWithout)) {
            assertThat(r.statusCode()).isEqualTo(401);
            assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        }
        assertThat(paymentRows(account)).isZero();
    }

    @Test
    void aMissingOrMalformedIdempotencyKeyIs400ProblemAndChargesNothing() throws Exception {
        String account = "acc-" + UUID.randomUUID();
        byte[] body = seedBody(account, "150.00");
        HttpResponse<byte[]> missing = send(HttpRequest.newBuilder(base.resolve("/payments"))
                .header("Authorization", "Bearer " + CLIENT_A_KEY).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)));
        HttpResponse<byte[]> tooLong = post(base, CLIENT_A_KEY, "k".repeat(256), body);
        HttpResponse<byte[]> badQuoting = post(base, CLIENT_A_KEY, "\"unterminated", body);

        for (HttpResponse<byte[]> r : List.of(missing, tooLong, badQuoting)) {
            assertThat(r.statusCode()).isEqualTo(400);
            assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
            assertThat(json(r).get("type").asText()).endsWith("invalid-idempotency-key");
            assertThat(r.headers().firstValue("Link")).hasValue(PaymentsApi.POLICY_LINK);
        }
        assertThat(paymentRows(account)).isZero();
    }

    @Test
    void twoIdempotencyKeyLinesAreA400InEitherOrderAndChargeNothing() throws Exception {
        String account = "acc-" + UUID.randomUUID();
        byte[] body = seedBody(account, "150.00");
        String k1 = UUID.randomUUID().toString();
        String k2 = UUID.randomUUID().toString();
        for (List<String> keys : List.of(List.of(k1, k2), List.of(k2, k1), List.of("\"" + k1 + "\"", k1))) {
            HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve("/payments"))
                    .header("Authorization", "Bearer " + CLIENT_A_KEY).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body));
            keys.forEach(k -> b.header("Idempotency-Key", k)); // one field line each
            HttpResponse<byte[]> r = send(b);
            assertThat(r.statusCode()).as("keys %s", keys).isEqualTo(400);
            assertThat(json(r).get("type").asText()).endsWith("invalid-idempotency-key");
            assertThat(json(r).get("detail").asText()).contains("is a list");
        }
        assertThat(paymentRows(account)).isZero();
    }

    @Test
    void aFieldNamedTwiceIsA400AndChargesNeitherValue() throws Exception {
        String account = "acc-" + UUID.randomUUID();
        HttpResponse<byte[]> r = post(base, CLIENT_A_KEY, UUID.randomUUID().toString(), ("{\"amount\": 5, \"amount\":"
                + " 5000, \"currency\": \"BRL\", \"account_id\": \"" + account + "\"}").getBytes(StandardCharsets.UTF_8));
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(json(r).get("detail").asText()).contains("Duplicate field 'amount'");
        assertThat(paymentRows(account)).isZero();
    }

    @Test
    void aBodyThatIsNotDeclaredJsonIs415AndChargesNothing() throws Exception {
        String account = "acc-" + UUID.randomUUID();
        byte[] body = seedBody(account, "150.00");
        for (String type : new String[] {null, "text/plain", "application/x-www-form-urlencoded", "application/jsonx"}) {
            HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve("/payments"))
                    .header("Authorization", "Bearer " + CLIENT_A_KEY)
                    .header("Idempotency-Key", UUID.randomUUID().toString())
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body));
            if (type != null) {
                b.header("Content-Type", type);
            }
            HttpResponse<byte[]> r = send(b);
            assertThat(r.statusCode()).as("Content-Type %s", type).isEqualTo(415);
            assertThat(json(r).get("type").asText()).endsWith("unsupported-media-type");
        }
        assertThat(paymentRows(account)).isZero();
        for (String type : new String[] {"application/json; charset=utf-8", "Application/JSON",
                "application/merge-patch+json"}) {
            assertThat(post(base, CLIENT_A_KEY, UUID.randomUUID().toString(), body, type).statusCode()).as(type)
                    .isEqualTo(201);
        }
        assertThat(paymentRows(account)).isEqualTo(3);
    }

    @Test
    void aBodyThatIsNotASeedPaymentIs400ProblemAndChargesNothing() throws Exception {
        String account = "acc-" + UUID.randomUUID();
        HttpResponse<byte[]> notJson = post(base, CLIENT_A_KEY, UUID.randomUUID().toString(),
                "{\"amount\": 150.00,".getBytes(StandardCharsets.UTF_8));
        HttpResponse<byte[]> noCurrency = post(base, CLIENT_A_KEY, UUID.randomUUID().toString(),
                ("{\"amount\": 150.00, \"account_id\": \"" + account + "\"}").getBytes(StandardCharsets.UTF_8));

        assertThat(notJson.statusCode()).isEqualTo(400);
        assertThat(noCurrency.statusCode()).isEqualTo(400);
        assertThat(new String(noCurrency.body(), StandardCharsets.UTF_8)).contains("currency");
        assertThat(paymentRows(account)).isZero();
    }

    @Test
    void aSmallBodyOfHugeExponentsOrAnUnknownFieldIs400AndChargesNothing() throws Exception {
        String account = "acc-" + UUID.randomUUID();
        StringBuilder exponents = new StringBuilder("{\"amount\": 150.00, \"currency\": \"BRL\", \"account_id\": \""
                + account + "\", \"x\": [");
        while (exponents.length() < 60_000) {
            exponents.append("1e9999,");
        }
        exponents.append("1]}");
        HttpResponse<byte[]> huge = post(base, CLIENT_A_KEY, UUID.randomUUID().toString(),
                exponents.toString().getBytes(StandardCharsets.UTF_8));
        HttpResponse<byte[]> hugest = post(base, CLIENT_A_KEY, UUID.randomUUID().toString(), ("{\"amount\": 150.00,"
                + " \"currency\": \"BRL\", \"account_id\": \"" + account + "\", \"y\": 1e99999}")
                .getBytes(StandardCharsets.UTF_8));
        HttpResponse<byte[]> hugeAmount = post(base, CLIENT_A_KEY, UUID.randomUUID().toString(),
                seedBody(account, "1e99999"));
        HttpResponse<byte[]> unknown = post(base, CLIENT_A_KEY, UUID.randomUUID().toString(), ("{\"amount\": 150.00,"
                + " \"currency\": \"BRL\", \"account_id\": \"" + account + "\", \"amuont\": 1}")
                .getBytes(StandardCharsets.UTF_8));

        for (HttpResponse<byte[]> r : List.of(huge, hugest, hugeAmount, unknown)) {
            assertThat(r.statusCode()).as(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo(400);
            assertThat(r.headers().firstValue("Content-Type")).contains("application/problem+json");
        }
        assertThat(new String(unknown.body(), StandardCharsets.UTF_8)).contains("unknown field 'amuont'");
        assertThat(paymentRows(account)).isZero();
    }

    @Test
    void healthIsUpAndMetricsCountTheRequestsInPrometheusText() throws Exception {
        String key = UUID.randomUUID().toString();
        byte[] body = seedBody("acc-" + UUID.randomUUID(), "150.00");
        post(base, CLIENT_A_KEY, key, body);
        post(base, CLIENT_A_KEY, key, body);

        HttpResponse<byte[]> health = send(HttpRequest.newBuilder(base.resolve("/health")).GET());
        HttpResponse<byte[]> metrics = send(HttpRequest.newBuilder(base.resolve("/metrics")).GET());

        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(json(health).get("status").asText()).isEqualTo("UP");
        assertThat(json(health).get("checks").get("store").asText()).isEqualTo("UP");
        assertThat(metrics.statusCode()).isEqualTo(200);
        String text = new String(metrics.body(), StandardCharsets.UTF_8);
        assertThat(text).contains("idemkit_http_requests");
        assertThat(text).containsPattern("idemkit_http_requests_total\\{outcome=\"replayed\"\\} [1-9]");
        assertThat(text).containsPattern("idemkit_http_requests_total\\{outcome=\"executed\"\\} [1-9]");
    }

    // ---- helpers

    /** 100 threads released at once, each sending the same POST with the same key. */
    private static List<HttpResponse<byte[]>> parallelSameKey(URI root, String apiKey, String account)
            throws Exception {
        String key = UUID.randomUUID().toString();
        byte[] body = seedBody(account, "150.00");
        ExecutorService pool = Executors.newFixedThreadPool(PARALLEL);
        CountDownLatch ready = new CountDownLatch(PARALLEL);
        CountDownLatch go = new CountDownLatch(1);
        try {
            List<Future<HttpResponse<byte[]>>> futures = new ArrayList<>();
            for (int i = 0; i < PARALLEL; i++) {
                futures.add(pool.submit(() -> {
                    ready.countDown();
                    go.await();
                    return post(root, apiKey, key, body);
                }));
            }
            ready.await();
            go.countDown();
            List<HttpResponse<byte[]>> responses = new ArrayList<>();
            for (Future<HttpResponse<byte[]>> f : futures) {
                responses.add(f.get());
            }
            return responses;
        } finally {
            pool.shutdownNow();
        }
    }

    /** Exactly one response is the original; the 99 others are replays with its status and exact bytes. */
    private static void assertSameAnswerOnce(List<HttpResponse<byte[]>> responses) {
        assertThat(responses).hasSize(PARALLEL);
        List<HttpResponse<byte[]>> originals = responses.stream()
                .filter(r -> r.headers().firstValue("Idempotent-Replayed").isEmpty()).toList();
        assertThat(originals).as("responses not marked as replays").hasSize(1);
        HttpResponse<byte[]> first = originals.get(0);
        assertThat(first.statusCode()).isEqualTo(201);
        for (HttpResponse<byte[]> r : responses) {
            assertThat(r.statusCode()).isEqualTo(first.statusCode());
            assertThat(Arrays.equals(r.body(), first.body())).as("byte-identical body").isTrue();
            if (r != first) {
                assertThat(r.headers().firstValue("Idempotent-Replayed")).hasValue("true");
            }
        }
    }

    private static void cleanUpRedis(String client, List<HttpResponse<byte[]>> responses) {
        Config config = new Config();
        config.useSingleServer().setAddress(TestEnvironment.REDIS_URL);
        RedissonClient redis = Redisson.create(config);
        try {
            String prefix = RedisSettings.defaults().keyPrefix();
            Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
            redis.getKeys().deleteByPattern(prefix + ":idem:{" + b64.encodeToString(client.getBytes(
                    StandardCharsets.US_ASCII)) + ".*");
            JsonNode payment = json(responses.get(0));
            redis.getKeys().delete(prefix + ":app:payment:" + payment.get("id").asText(),
                    prefix + ":app:account-payments:" + payment.get("account_id").asText());
        } finally {
            redis.shutdown();
        }
    }

    static byte[] seedBody(String account, String amount) {
        return ("{\"amount\": " + amount + ", \"currency\": \"BRL\", \"account_id\": \"" + account + "\"}")
                .getBytes(StandardCharsets.UTF_8);
    }

    private static HttpResponse<byte[]> post(URI root, String apiKey, String key, byte[] body) throws Exception {
        return post(root, apiKey, key, body, "application/json");
    }

    private static HttpResponse<byte[]> post(URI root, String apiKey, String key, byte[] body, String contentType)
            throws Exception {
        return send(HttpRequest.newBuilder(root.resolve("/payments")).header("Authorization", "Bearer " + apiKey)
                .header("Idempotency-Key", key).header("Content-Type", contentType)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)));
    }

    private static HttpResponse<byte[]> get(URI root, String apiKey, String paymentId) throws Exception {
        return send(HttpRequest.newBuilder(root.resolve("/payments/" + paymentId))
                .header("Authorization", "Bearer " + apiKey).GET());
    }

    private static HttpResponse<byte[]> send(HttpRequest.Builder request) throws Exception {
        return HTTP.send(request.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static JsonNode json(HttpResponse<byte[]> r) {
        return CanonicalJson.parse(r.body());
    }

    private static long paymentRows(String account) throws Exception {
        try (Connection c = TestEnvironment.connect();
                PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM " + schema
                        + ".payments WHERE account_id = ?")) {
            ps.setString(1, account);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
