package dev.idemkit.domain;

import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;
import static org.quicktheories.generators.SourceDSL.longs;
import static org.quicktheories.generators.SourceDSL.strings;

import dev.idemkit.domain.deadletter.AttemptRecord;
import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.domain.inbox.Inbox;
import dev.idemkit.domain.inbox.InboxDelivery;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.domain.inbox.InboxState;
import dev.idemkit.domain.retry.NonRetryableException;
import dev.idemkit.domain.upsert.Upsert;
import dev.idemkit.domain.upsert.UpsertState;
import dev.idemkit.domain.versioned.Versioned;
import dev.idemkit.domain.versioned.VersionedEvent;
import dev.idemkit.domain.versioned.VersionedState;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.quicktheories.api.Pair;
import org.quicktheories.core.Gen;
import org.quicktheories.core.RandomnessSource;
import org.quicktheories.generators.Generate;

/** Every QuickTheories generator of the domain tests, and the small test-data types they produce. */
public final class Generators {
    private Generators() {}

    // ---------------------------------------------------------------- keys

    /** Any key the key rule accepts: 1..255 characters from 0x21..0x7E. */
    public static Gen<String> validKeys() {
        return strings().betweenCodePoints(0x21, 0x7E).ofLengthBetween(1, KeyRules.MAX_LENGTH);
    }

    /** Valid keys of 256..1024 characters: one too many and beyond. */
    public static Gen<String> overlongKeys() {
        return strings().betweenCodePoints(0x21, 0x7E).ofLengthBetween(KeyRules.MAX_LENGTH + 1, 1024);
    }

    /** A character the key rule forbids: a control character or space, DEL, or anything past ASCII. */
    public static Gen<Character> forbiddenKeyChars() {
        return Generate.oneOf(Generate.characters(0x00, 0x20), Generate.constant((char) 0x7F),
                Generate.characters(0x80, 0xFFFF));
    }

    /** A valid key with one character replaced by a forbidden one at {@code index}. */
    public record BrokenKey(String value, int index, char forbidden) {}

    public static Gen<BrokenKey> keysWithOneForbiddenChar() {
        return validKeys().flatMap(key -> in -> {
            int index = Generate.range(0, key.length() - 1).generate(in);
            char bad = forbiddenKeyChars().generate(in);
            String broken = key.substring(0, index) + bad + key.substring(index + 1);
            return new BrokenKey(broken, index, bad);
        });
    }

    /** Valid keys that do not start with a quote, so that a header parser must take them as bare. */
    public static Gen<String> bareKeys() {
        // a comma outside quotes makes a list (IdempotencyKey.parseHeader), so a bare key has none
        return validKeys().map(k -> (k.startsWith("\"") ? "'" + k.substring(1) : k).replace(',', ';'));
    }

    /** A key as a client would send it in a structured-field string: quoted, with {@code "} and {@code \} escaped. */
    public static String quoted(String key) {
        return '"' + key.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }

    public static Gen<MessageId> anyMessageId() {
        return validKeys().map(MessageId::new);
    }

    public static Gen<ConsumerName> anyConsumerName() {
        return validKeys().map(ConsumerName::new);
    }

    // ---------------------------------------------------------------- bytes and fingerprints

    public static Gen<byte[]> anyBytes() {
        return Generate.byteArrays(Generate.range(0, 64), Generate.bytes(Byte.MIN_VALUE, Byte.MAX_VALUE, (byte) 0));
    }

    /** Text from the whole Basic Multilingual Plane, to probe UTF-8 encoding. */
    public static Gen<String> anyText() {
        return strings().basicMultilingualPlaneAlphabet().ofLengthBetween(0, 40);
    }

    /** An HTTP request as the fingerprint sees it. */
    public record Request(String method, String path, byte[] body) {
        public Fingerprint fingerprint() {
            return Fingerprint.ofRequest(method, path, body);
        }
    }

    public static Gen<Request> anyRequest() {
        return Generate.pick(List.of("GET", "POST", "PUT", "PATCH", "DELETE"))
                .zip(strings().basicLatinAlphabet().ofLengthBetween(0, 20).map(p -> "/" + p), anyBytes(),
                        Request::new);
    }

    /** A request and a copy of it with exactly one part (method, path or body) changed. */
    public record RequestPair(Request original, Request changed, String changedPart) {}

    public static Gen<RequestPair> requestsDifferingInOnePart() {
        return anyRequest().zip(Generate.pick(List.of("method", "path", "body")), anyRequest(), (a, part, b) -> {
            Request changed = switch (part) {
                case "method" -> new Request(a.method().equals(b.method()) ? a.method() + "X" : b.method(), a.path(),
                        a.body());
                case "path" -> new Request(a.method(), a.path().equals(b.path()) ? a.path() + "/x" : b.path(), a.body());
                default -> new Request(a.method(), a.path(),
                        Arrays.equals(a.body(), b.body()) ? Arrays.copyOf(a.body(), a.body().length + 1) : b.body());
            };
            return new RequestPair(a, changed, part);
        });
    }

    /** Two places (first <= second) at which to cut a text into method, path and body. */
    public record Cut(int first, int second) {}

    public static Gen<Cut> cuts() {
        return integers().between(0, 30).zip(integers().between(0, 30),
                (x, y) -> new Cut(Math.min(x, y), Math.max(x, y)));
    }

    // ---------------------------------------------------------------- schedules of deliveries

    /** A delivery carrying an amount: the effect under test adds the amount to a counter (NOT idempotent). */
    public record Counted<D>(D delivery, int amount) {}

    /**
     * A delivery schedule: the distinct deliveries in the order they were first sent, and what the
     * broker delivered, the same deliveries with repeats inserted at random positions.
     */
    public record Schedule<T>(List<T> distinct, List<T> delivered) {
        public int duplicates() {
            return delivered.size() - distinct.size();
        }

        /** The delivered sequence without its repeats: each delivery at its first occurrence. */
        public List<T> deduplicated() {
            return delivered.stream().distinct().toList();
        }
    }

    /** Inserts 0..2n repeats of the given distinct deliveries at random positions. */
    public static <T> Gen<Schedule<T>> withDuplicates(Gen<List<T>> distinct) {
        return distinct.flatMap(list -> in -> new Schedule<>(list, insertRepeats(list, in)));
    }

    /** Shuffles the distinct deliveries, then inserts repeats: duplicates AND reordering. */
    public static <T> Gen<Schedule<T>> reorderedWithDuplicates(Gen<List<T>> distinct) {
        return distinct.flatMap(list -> in -> {
            List<T> shuffled = shuffle(list, in);
            return new Schedule<>(shuffled, insertRepeats(shuffled, in));
        });
    }

    /** A random permutation (Fisher-Yates, drawing from QuickTheories so that it shrinks). */
    public static <T> Gen<List<T>> shuffled(List<T> items) {
        return in -> shuffle(items, in);
    }

    private static <T> List<T> shuffle(List<T> items, RandomnessSource in) {
        List<T> out = new ArrayList<>(items);
        for (int i = out.size() - 1; i > 0; i--) {
            int j = Generate.range(0, i).generate(in);
            T tmp = out.get(i);
            out.set(i, out.get(j));
            out.set(j, tmp);
        }
        return out;
    }

    private static <T> List<T> insertRepeats(List<T> distinct, RandomnessSource in) {
        List<T> out = new ArrayList<>(distinct);
        if (distinct.isEmpty()) {
            return out;
        }
        int repeats = Generate.range(0, 2 * distinct.size()).generate(in);
        for (int r = 0; r < repeats; r++) {
            T again = distinct.get(Generate.range(0, distinct.size() - 1).generate(in));
            out.add(Generate.range(0, out.size()).generate(in), again);
        }
        return out;
    }

    private static <T, K> Function<List<T>, List<T>> distinctBy(Function<T, K> key) {
        return list -> {
            Map<K, T> first = new LinkedHashMap<>();
            list.forEach(t -> first.putIfAbsent(key.apply(t), t));
            return List.copyOf(first.values());
        };
    }

    private static Gen<Integer> amounts() {
        return integers().between(1, 1_000);
    }

    // ---------------------------------------------------------------- inbox

    private static final List<ConsumerName> CONSUMERS =
            List.of(ConsumerName.of("billing"), ConsumerName.of("shipping"), ConsumerName.of("audit"));

    /** Keys from a small pool (2 consumers x 5 ids) so that generated histories collide often. */
    public static Gen<InboxKey> fewInboxKeys() {
        return Generate.pick(CONSUMERS.subList(0, 2))
                .zip(integers().between(0, 4), (c, i) -> new InboxKey(c, MessageId.of("m" + i)));
    }

    /** A delivery from the small key pool whose body is one of three, so that redeliveries and reused ids both occur. */
    public static Gen<InboxDelivery> fewInboxDeliveries() {
        return fewInboxKeys().zip(Generate.pick(List.of("a", "b", "c")),
                (k, body) -> new InboxDelivery(k, Fingerprint.of(body)));
    }

    /** Any state an inbox can reach: a random history of deliveries applied from empty. */
    public static Gen<InboxState> inboxStates() {
        return lists().of(fewInboxDeliveries()).ofSizeBetween(0, 15).map(history -> {
            InboxState s = InboxState.empty();
            for (InboxDelivery d : history) {
                s = Inbox.apply(s, d).state();
            }
            return s;
        });
    }

    /**
     * The consumers a fanned-out message reaches, in delivery order: {@code true} for the first consumer,
     * {@code false} for the second; each gets it at least once and up to 10 times, in any order.
     */
    public static Gen<List<Boolean>> fanOuts() {
        return integers().between(1, 10).zip(integers().between(1, 10), (first, second) -> {
            List<Boolean> all = new ArrayList<>(Collections.nCopies(first, true));
            all.addAll(Collections.nCopies(second, false));
            return all;
        }).flatMap(Generators::shuffled);
    }

    /** A delivery whose body (and so fingerprint) is derived from its key and amount, as a producer's would be. */
    public static Counted<InboxDelivery> countedInboxDelivery(InboxKey key, int amount) {
        return new Counted<>(new InboxDelivery(key, Fingerprint.of(key.consumer() + "/" + key.messageId() + "/" + amount)),
                amount);
    }

    /** Up to 30 deliveries with distinct inbox keys (3 consumers x 40 ids), each carrying an amount. */
    public static Gen<List<Counted<InboxDelivery>>> distinctInboxDeliveries() {
        Gen<InboxKey> keys = Generate.pick(CONSUMERS)
                .zip(integers().between(0, 39), (c, i) -> new InboxKey(c, MessageId.of("msg-" + i)));
        return lists().of(keys.zip(amounts(), Generators::countedInboxDelivery)).ofSizeBetween(0, 30)
                .map(distinctBy(c -> c.delivery().key()));
    }

    public static Gen<Schedule<Counted<InboxDelivery>>> inboxSchedules() {
        return withDuplicates(distinctInboxDeliveries());
    }

    // ---------------------------------------------------------------- versioned

    private static final List<String> AGGREGATES = List.of("order-1", "order-2", "order-3", "order-4");

    /** Events over 3 aggregates, versions 0..10, values 0..5: collisions, duplicates and stale versions all occur. */
    public static Gen<VersionedEvent<Integer>> fewVersionedEvents() {
        return Generate.pick(AGGREGATES.subList(0, 3)).zip(longs().between(0, 10), integers().between(0, 5),
                (a, v, x) -> new VersionedEvent<>(a, Version.of(v), x));
    }

    public static Gen<VersionedState<Integer>> versionedStates() {
        return lists().of(fewVersionedEvents()).ofSizeBetween(0, 15).map(history -> {
            VersionedState<Integer> s = VersionedState.empty();
            for (VersionedEvent<Integer> e : history) {
                s = Versioned.apply(s, e).state();
            }
            return s;
        });
    }

    /** Up to 30 events, distinct per (aggregate, version); the value is the amount the effect adds. */
    public static Gen<List<VersionedEvent<Integer>>> distinctVersionedEvents() {
        Gen<VersionedEvent<Integer>> events = Generate.pick(AGGREGATES)
                .zip(longs().between(0, 30), amounts(), (a, v, x) -> new VersionedEvent<>(a, Version.of(v), x));
        return lists().of(events).ofSizeBetween(0, 30)
                .map(distinctBy(e -> e.aggregateId() + "@" + e.version().value()));
    }

    public static Gen<Schedule<VersionedEvent<Integer>>> versionedSchedules() {
        return reorderedWithDuplicates(distinctVersionedEvents());
    }

    // ---------------------------------------------------------------- upsert

    /** Natural keys from a small pool so that histories collide often. */
    public static Gen<NaturalKey> fewNaturalKeys() {
        return integers().between(0, 5).map(i -> NaturalKey.of("order-" + i));
    }

    public static Gen<UpsertState<Integer>> upsertStates() {
        return lists().of(fewNaturalKeys().zip(integers().between(0, 5), Counted::new)).ofSizeBetween(0, 15)
                .map(history -> {
                    UpsertState<Integer> s = UpsertState.empty();
                    for (Counted<NaturalKey> c : history) {
                        s = Upsert.apply(s, c.delivery(), c.amount()).state();
                    }
                    return s;
                });
    }

    /** Up to 30 creations with distinct natural keys, each carrying an amount (also the stored value). */
    public static Gen<List<Counted<NaturalKey>>> distinctCreations() {
        Gen<NaturalKey> keys = integers().between(0, 59).map(i -> NaturalKey.of("order-" + i));
        return lists().of(keys.zip(amounts(), Counted::new)).ofSizeBetween(0, 30).map(distinctBy(Counted::delivery));
    }

    public static Gen<Schedule<Counted<NaturalKey>>> upsertSchedules() {
        return withDuplicates(distinctCreations());
    }

    // ---------------------------------------------------------------- retry

    /** A backoff's base and cap in nanoseconds, cap >= base, from 1 ns up to Long.MAX_VALUE ns. */
    public record BaseAndCap(long baseNanos, long capNanos) {
        public Duration base() {
            return Duration.ofNanos(baseNanos);
        }

        public Duration cap() {
            return Duration.ofNanos(capNanos);
        }
    }

    public static Gen<BaseAndCap> basesAndCaps() {
        Gen<Long> small = longs().between(1, 10_000_000_000L);
        Gen<Long> any = longs().between(1, Long.MAX_VALUE);
        Gen<Long> base = small.mix(any, 30).mix(Generate.constant(Long.MAX_VALUE), 5);
        return base.flatMap(b -> in -> {
            long headroom = Long.MAX_VALUE - b;
            long extra = Generate.oneOf(longs().between(0, Math.min(headroom, 1_000_000_000_000L)),
                    longs().between(0, headroom), Generate.constant(0L)).generate(in);
            return new BaseAndCap(b, b + extra);
        });
    }

    /** Attempt numbers (from 0): mostly small, sometimes huge, including 1000 and Integer.MAX_VALUE. */
    public static Gen<Integer> attempts() {
        return integers().between(0, 70).mix(integers().between(0, Integer.MAX_VALUE), 25)
                .mix(Generate.pick(List.of(62, 63, 64, 1000, Integer.MAX_VALUE)), 10);
    }

    /** Draws in [0, 1) exactly as {@code Random.nextDouble} makes them: k * 2^-53, with the ends included. */
    public static Gen<Double> unitDraws() {
        return longs().between(0, (1L << 53) - 1).map(k -> k * 0x1.0p-53)
                .mix(Generate.pick(List.of(0.0, Math.nextDown(1.0), 0.5)), 10);
    }

    /** A non-retryable failure: a NonRetryableException however deeply wrapped, or a bare validation failure. */
    public static Gen<Throwable> nonRetryableFailures() {
        Gen<Throwable> verdict = lists().of(integers().between(0, 2)).ofSizeBetween(0, 4).map(wrappers -> {
            Throwable t = new NonRetryableException("malformed payload");
            for (int w : wrappers) {
                t = wrap(w, t);
            }
            return t;
        });
        Gen<Throwable> validation = Generate.pick(List.of(0, 1)).map(i -> i == 0
                ? new IllegalArgumentException("amount must be positive")
                : new InvalidKeyException("message id is empty (rule: at least 1 character)"));
        // an explicit verdict counts however deeply wrapped; a validation failure only as the failure itself
        return Generate.frequency(Pair.of(3, verdict), Pair.of(1, validation));
    }

    /** A failure chain with no NonRetryableException in it and no IllegalArgumentException at its top. */
    public static Gen<Throwable> retryableFailures() {
        Gen<Throwable> root = Generate.pick(List.of(0, 1, 2, 3, 4)).map(i -> switch (i) {
            case 0 -> new TimeoutException("broker did not answer");
            case 1 -> new IOException("connection reset");
            case 2 -> new IllegalStateException("deadlock detected");
            // an infrastructure failure whose detail is a refused argument: the outer exception decides
            case 3 -> new IllegalStateException("store failed", new IllegalArgumentException("invalid property"));
            default -> new RuntimeException((String) null);
        });
        return root.zip(lists().of(integers().between(0, 2)).ofSizeBetween(0, 4), (cause, wrappers) -> {
            Throwable t = cause;
            for (int w : wrappers) {
                t = wrap(w, t);
            }
            return t;
        });
    }

    private static Throwable wrap(int kind, Throwable cause) {
        return switch (kind) {
            case 0 -> new RuntimeException("handler failed", cause);
            case 1 -> new IllegalStateException("wrapped", cause);
            default -> new UncheckedIOException("io", cause instanceof IOException io ? io : new IOException(cause));
        };
    }

    // ---------------------------------------------------------------- dead letters

    /** Error text rich in the characters the history format must escape: tab, newline, CR, backslash. */
    public static Gen<String> errorTexts(int maxLength) {
        Gen<Character> tricky = Generate.pick(List.of('\t', '\n', '\r', '\\', 't', 'n', 'r', ' '));
        Gen<Character> any = Generate.characters(0x00, 0xFFFF);
        Gen<Character> chars = tricky.mix(any, 50);
        return lists().of(chars).ofSizeBetween(0, maxLength).map(cs -> {
            StringBuilder sb = new StringBuilder(cs.size());
            cs.forEach(sb::append);
            return sb.toString();
        });
    }

    public static Gen<Instant> anyInstant() {
        return longs().between(Instant.MIN.getEpochSecond(), Instant.MAX.getEpochSecond())
                .mix(longs().between(0, 4_102_444_800L), 70)
                .zip(integers().between(0, 999_999_999), Instant::ofEpochSecond);
    }

    public static Gen<AttemptRecord> attemptRecords(int maxErrorLength) {
        return integers().between(1, Integer.MAX_VALUE).mix(integers().between(1, 10), 50)
                .zip(anyInstant(), errorTexts(maxErrorLength), AttemptRecord::new);
    }

    // ---------------------------------------------------------------- Idempotency-Key

    /** The fingerprints of two different requests that a client might send under one key. */
    public static final Fingerprint FIRST_BODY = Fingerprint.ofRequest("POST", "/payments",
            "{\"amount\":100}".getBytes(StandardCharsets.UTF_8));
    public static final Fingerprint OTHER_BODY = Fingerprint.ofRequest("POST", "/payments",
            "{\"amount\":999}".getBytes(StandardCharsets.UTF_8));

    /** One step in the life of an idempotency key. */
    public sealed interface KeyOp {
        /** A request with the key arrives. */
        record Send(Fingerprint fingerprint) implements KeyOp {}

        /** The request currently running (if any) finishes with this response. */
        record Finish(StoredResponse response) implements KeyOp {}

        /** The clock moves on. */
        record Advance(Duration by) implements KeyOp {}
    }

    public static Gen<StoredResponse> responses() {
        return Generate.pick(List.of(200, 201, 204, 400, 404, 409, 422, 500, 502, 503))
                .zip(strings().basicLatinAlphabet().ofLengthBetween(0, 12),
                        (status, body) -> new StoredResponse(status, Map.of("Content-Type", "application/json"),
                                ("{\"r\":\"" + body + "\"}").getBytes(StandardCharsets.UTF_8)));
    }

    /** Time steps for a 24 h TTL: mostly seconds to hours, sometimes a jump past the TTL. */
    public static Gen<Duration> clockSteps() {
        Gen<Duration> withinTtl = longs().between(1, 7_200).map(s -> Duration.ofSeconds(s));
        Gen<Duration> pastTtl = longs().between(24 * 3_600, 25 * 3_600).map(s -> Duration.ofSeconds(s));
        return withinTtl.mix(pastTtl, 30);
    }

    public static Gen<List<KeyOp>> keyHistories() {
        Gen<KeyOp> send = Generate.pick(List.of(FIRST_BODY, FIRST_BODY, OTHER_BODY)).map(KeyOp.Send::new);
        Gen<KeyOp> finish = responses().map(KeyOp.Finish::new);
        Gen<KeyOp> advance = clockSteps().map(KeyOp.Advance::new);
        Gen<KeyOp> op = Generate.frequency(Pair.of(5, send), Pair.of(3, finish), Pair.of(2, advance));
        return lists().of(op).ofSizeBetween(1, 40);
    }

    // ---------------------------------------------------------------- failure shapes

    /** Pieces a dead letter's reason is made of, each aimed at one of FailureShape's rules or their edges. */
    private static final List<String> REASON_PIECES = List.of("gave up after 3 attempts: ", "non-retryable: ",
            "IllegalStateException: ", "java.net.SocketTimeoutException: ", "S3Exception", "insufficient funds for account ",
            "42", "7", "3.14", "1,000", "-5", "0x1F", "deadbeef", "1a2b3c", "1a2b3cg", "abc12345",
            "2026-12-01", "2026-12-01T10:15:30Z", "2026-12-01 10:15:30.123+01:00",
            "123e4567-e89b-12d3-a456-426614174000", "ana@example.org", "a.b+c@d-e.f", "'acc-7'", "\"dq 9\"", "can't ",
            "'", "\"", " ", "  ", "\t", "\n", "\r\n", ":", ": ", ".", ",", "(", ")", "=", "@", "-", "_", "<n>", "<hex>",
            "\u001b[31m", "\u202e", "é", "\uD83D\uDE00", "\uD83D", "...", "order", " T ", "Z");

    /**
     * Reasons as a failing handler writes them and worse: pieces aimed at every rule of FailureShape (numbers glued or
     * not, hex ids and near misses, quotes open and closed, dates, UUIDs, addresses, control characters, surrogates),
     * random text between them, and lengths past the bound, so that the cut meets every kind of token.
     */
    public static Gen<String> failureReasons() {
        Gen<String> tricky = lists().of(Generate.pick(List.of("0", "1", "9", "a", "f", "g", "x", "X", "T", "Z", "'",
                "\"", " ", ":", "-", ".", ",", "@", "+", "_", "<", ">"))).ofSizeBetween(1, 12)
                .map(cs -> String.join("", cs));
        Gen<String> piece = Generate.frequency(Pair.of(6, Generate.pick(REASON_PIECES)), Pair.of(3, tricky),
                Pair.of(1, strings().allPossible().ofLengthBetween(0, 6)),
                Pair.of(1, strings().basicLatinAlphabet().ofLengthBetween(0, 40)));
        return lists().of(piece).ofSizeBetween(1, 120).map(ps -> {
            String r = String.join("", ps);
            return r.isBlank() ? "x" + r : r;
        });
    }
}
