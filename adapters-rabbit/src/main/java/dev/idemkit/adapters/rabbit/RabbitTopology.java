package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.Channel;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The names and arguments of everything the adapter declares for a work queue {@code Q}; every
 * declaration is idempotent (same name, same arguments).
 *
 * <pre>
 *  Q                 durable; x-dead-letter-exchange = Q.dlx, routing key Q.dlq (rejects, fallback path; quorum:
 *                    also deliveries over x-delivery-limit)
 *  Q.retry.{N}s      durable; x-message-ttl = N s; dead-letters to "" with routing key Q (back to the work queue)
 *  Q.dlq.hold        durable; x-message-ttl = 0; dead-letters to Q.dlx with routing key Q.dlq
 *  Q.dlx             durable direct exchange; Q.dlq bound with routing key Q.dlq
 *  Q.dlq             durable, no TTL: the dead letters, with x-death and the idemkit headers, kept until an
 *                    operator redrives or removes them (nothing expires a dead letter unseen)
 * </pre>
 *
 * Quorum queues (the default) add {@code x-queue-type=quorum} to all of them, and
 * {@code x-dead-letter-strategy=at-least-once} with {@code x-overflow=reject-publish} to the three that dead-letter;
 * classic ones get {@code x-queue-type=classic}, which RabbitMQ takes as equivalent to the untyped queues idemkit
 * declared before quorum support, so existing classic deployments keep working ({@link Shape}).
 *
 * <p>Retry buckets are powers of two from 1 s to 4096 s; a delay goes to the smallest bucket that holds it
 * and also carries its exact delay as the per-message {@code expiration}.
 */
final class RabbitTopology {
    static final int MAX_QUEUE_NAME = 200;
    static final int MAX_BUCKET_SECONDS = 4096;

    private RabbitTopology() {}

    static String deadLetterExchange(String queue) {
        return queue + ".dlx";
    }

    static String deadLetterQueue(String queue) {
        return queue + ".dlq";
    }

    static String holdQueue(String queue) {
        return queue + ".dlq.hold";
    }

    static String retryQueue(String queue, int bucketSeconds) {
        return queue + ".retry." + bucketSeconds + "s";
    }

    /** Whether {@code name} is one of {@code queue}'s retry buckets ({@code queue.retry.<N>s}). */
    static boolean isRetryQueueOf(String name, String queue) {
        String prefix = queue + ".retry.";
        return name.startsWith(prefix) && name.endsWith("s") && name.length() > prefix.length() + 1
                && name.substring(prefix.length(), name.length() - 1).chars().allMatch(Character::isDigit);
    }

    /** The smallest power-of-two bucket (seconds) that holds {@code delay}; longer delays get the largest. */
    static int bucketSeconds(Duration delay) {
        long millis = Math.max(0, delay.toMillis());
        int bucket = 1;
        while (bucket < MAX_BUCKET_SECONDS && bucket * 1000L < millis) {
            bucket *= 2;
        }
        return bucket;
    }

    static List<Integer> allBuckets() {
        List<Integer> out = new ArrayList<>();
        for (int b = 1; b <= MAX_BUCKET_SECONDS; b *= 2) {
            out.add(b);
        }
        return out;
    }

    static void requireUsableName(String queue) {
        if (queue == null || queue.isBlank() || queue.length() > MAX_QUEUE_NAME || queue.startsWith("amq.")) {
            throw new IllegalArgumentException("queue name must be 1.." + MAX_QUEUE_NAME
                    + " characters and not start with amq., got " + queue);
        }
    }

    /**
     * What every queue of a topology is declared with: the type, and for quorum queues at-least-once dead-lettering
     * and the work queue's delivery limit.
     *
     * @param brokerMajor the broker's major version; from 4 on quorum queues have a default delivery limit of 20,
     *     which would let the broker drop a dead letter that operators inspected 20 times (every read gives it back),
     *     so the dead-letter queue then gets {@code x-delivery-limit = -1} (RabbitMQ 4: no limit). On 3.x it gets
     *     none: there -1 is not "unlimited" (a returned message was dropped on 3.10.8)
     */
    record Shape(RabbitSettings.QueueType type, int deliveryLimit, int brokerMajor) {
        boolean quorum() {
            return type == RabbitSettings.QueueType.QUORUM;
        }

        /** Q: rejects and (quorum) deliveries over the limit dead-letter into Q.dlx -> Q.dlq. */
        Map<String, Object> work(String queue) {
            Map<String, Object> args = deadLettering(deadLetterExchange(queue), deadLetterQueue(queue));
            if (quorum()) {
                args.put(DELIVERY_LIMIT, deliveryLimit);
            }
            return args;
        }

        /** Q.dlq.hold: TTL 0, so the broker dead-letters at once into Q.dlq (adding x-death). */
        Map<String, Object> hold(String queue) {
            Map<String, Object> args = deadLettering(deadLetterExchange(queue), deadLetterQueue(queue));
            args.put("x-message-ttl", 0);
            return args;
        }

        /** Q.retry.Ns: TTL N s, dead-letters back to Q through the default exchange. */
        Map<String, Object> retryBucket(String queue, int bucketSeconds) {
            Map<String, Object> args = deadLettering("", queue);
            args.put("x-message-ttl", bucketSeconds * 1000);
            return args;
        }

        /** Q.dlq: no TTL, no dead-lettering of its own; nothing expires or drops a dead letter. */
        Map<String, Object> deadLetters() {
            Map<String, Object> args = new LinkedHashMap<>();
            args.put(QUEUE_TYPE, type.label());
            if (quorum() && brokerMajor >= 4) {
                args.put(DELIVERY_LIMIT, -1);
            }
            return args;
        }

        private Map<String, Object> deadLettering(String exchange, String routingKey) {
            Map<String, Object> args = new LinkedHashMap<>();
            // explicit for classic too: a virtual host whose default queue type is quorum would otherwise turn an
            // untyped declaration into a quorum queue; RabbitMQ treats an existing untyped queue as classic
            args.put(QUEUE_TYPE, type.label());
            if (quorum()) {
                // at-least-once dead-lettering needs reject-publish; without it RabbitMQ silently falls back to at-most-once
                args.put("x-overflow", "reject-publish");
                args.put("x-dead-letter-strategy", "at-least-once");
            }
            args.put("x-dead-letter-exchange", exchange);
            args.put("x-dead-letter-routing-key", routingKey);
            return args;
        }
    }

    static final String QUEUE_TYPE = "x-queue-type";
    static final String DELIVERY_LIMIT = "x-delivery-limit";

    /** The queues of {@code queue}'s topology but the optional retry buckets, in declaration order, with their arguments. */
    static Map<String, Map<String, Object>> queues(String queue, Shape shape) {
        Map<String, Map<String, Object>> out = new LinkedHashMap<>();
        out.put(deadLetterQueue(queue), shape.deadLetters());
        out.put(holdQueue(queue), shape.hold(queue));
        out.put(queue, shape.work(queue));
        return out;
    }

    /** The retry buckets declared with the topology: those the first {@code retries} retries of the default backoff use. */
    static List<Integer> bucketsUpFront(int retries) {
        List<Integer> out = new ArrayList<>();
        for (int retry = 0; retry < retries; retry++) {
            int bucket = bucketSeconds(Duration.ofSeconds(1L << Math.min(retry, 12)));
            if (!out.contains(bucket)) {
                out.add(bucket);
            }
        }
        return out;
    }

    /** Deletes every queue and the exchange the adapter may have declared for {@code queue}. */
    static void delete(Channel channel, String queue) throws IOException {
        channel.queueDelete(queue);
        channel.queueDelete(holdQueue(queue));
        channel.queueDelete(deadLetterQueue(queue));
        for (int bucket : allBuckets()) {
            channel.queueDelete(retryQueue(queue, bucket));
        }
        channel.exchangeDelete(deadLetterExchange(queue));
    }
}
