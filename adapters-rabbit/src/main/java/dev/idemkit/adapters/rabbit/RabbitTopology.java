package dev.idemkit.adapters.rabbit;

import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The names and arguments of everything the adapter declares for a work queue {@code Q}; every
 * declaration is idempotent (same name, same arguments).
 *
 * <pre>
 *  Q                 durable; x-dead-letter-exchange = Q.dlx, routing key Q.dlq (rejects, fallback path)
 *  Q.retry.{N}s      durable; x-message-ttl = N s; dead-letters to "" with routing key Q (back to the work queue)
 *  Q.dlq.hold        durable; x-message-ttl = 0; dead-letters to Q.dlx with routing key Q.dlq
 *  Q.dlx             durable direct exchange; Q.dlq bound with routing key Q.dlq
 *  Q.dlq             durable, no TTL: the dead letters, with x-death and the idemkit headers, kept until an
 *                    operator redrives or removes them (nothing expires a dead letter unseen)
 * </pre>
 *
 * Retry buckets are powers of two from 1 s to 4096 s; a delay goes to the smallest bucket that holds it
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

    /** Declares the work queue, the dead-letter path and the retry buckets for the first {@code retries} retries. */
    static void declare(Channel channel, String queue, int retries) throws IOException {
        String dlx = deadLetterExchange(queue);
        String dlq = deadLetterQueue(queue);
        channel.exchangeDeclare(dlx, BuiltinExchangeType.DIRECT, true);
        channel.queueDeclare(dlq, true, false, false, Map.of());
        channel.queueBind(dlq, dlx, dlq);
        channel.queueDeclare(holdQueue(queue), true, false, false,
                Map.of("x-message-ttl", 0, "x-dead-letter-exchange", dlx, "x-dead-letter-routing-key", dlq));
        channel.queueDeclare(queue, true, false, false,
                Map.of("x-dead-letter-exchange", dlx, "x-dead-letter-routing-key", dlq));
        for (int retry = 0; retry < retries; retry++) {
            declareRetryBucket(channel, queue, bucketSeconds(Duration.ofSeconds(1L << Math.min(retry, 12))));
        }
    }

    static void declareRetryBucket(Channel channel, String queue, int bucketSeconds) throws IOException {
        channel.queueDeclare(retryQueue(queue, bucketSeconds), true, false, false, Map.of(
                "x-message-ttl", bucketSeconds * 1000,
                "x-dead-letter-exchange", "",
                "x-dead-letter-routing-key", queue));
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
