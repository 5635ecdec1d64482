package dev.idemkit.app.http;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Dead letters written as the RabbitMQ transport writes them: published to the queue's hold queue with idemkit's
 * dead-letter headers, from where the broker dead-letters them into {@code Q.dlq} (so {@code x-death} is there). Their
 * bodies are valid credits of 1.00 to {@code account}, so a redriven one is processed by the app's credit consumer.
 */
public final class DeadLetterInjector {
    /**
     * When the injected dead letters' first attempt failed: an hour before this JVM started, so that they are inside
     * every redrive window whatever the date (a fixed date here made the console's redrive tests fail once the date
     * was four days past it: the window refused them as too old).
     */
    public static final java.time.Instant FIRST_ATTEMPT = java.time.Instant.now().minus(java.time.Duration.ofHours(1))
            .truncatedTo(java.time.temporal.ChronoUnit.SECONDS);

    private DeadLetterInjector() {}

    /** Dead letters {@code dl-<prefix>-i} for messages {@code m-<prefix>-i}, crediting {@code <accountPrefix>-i}. */
    public static void inject(String rabbitUri, String queue, String prefix, String accountPrefix, int n, String reason)
            throws Exception {
        inject(rabbitUri, queue, prefix, accountPrefix, 0, n, i -> reason);
    }

    /** As above for {@code i} in {@code [from, to)}, each given up for {@code reasons.apply(i)} (failure groups). */
    public static void inject(String rabbitUri, String queue, String prefix, String accountPrefix, int from, int to,
            java.util.function.IntFunction<String> reasons) throws Exception {
        ConnectionFactory f = new ConnectionFactory();
        f.setUri(rabbitUri);
        try (Connection c = f.newConnection("idemkit-it-dead-letters"); Channel ch = c.createChannel()) {
            ch.confirmSelect();
            for (int i = from; i < to; i++) {
                String reason = reasons.apply(i);
                ch.basicPublish("", queue + ".dlq.hold", new AMQP.BasicProperties.Builder()
                        .messageId(messageId(prefix, i)).deliveryMode(2).contentType("application/json")
                        .headers(Map.of("x-idemkit-dead-letter-reason", reason,
                                "x-idemkit-dead-letter-id", "dl-" + prefix + "-" + i,
                                "x-idemkit-attempts", "1\t" + FIRST_ATTEMPT + "\t" + reason,
                                "tenant", "t-1", "note", "\u001b[31mred"))
                        .build(), credit(accountPrefix + "-" + i));
            }
            ch.waitForConfirmsOrDie(10_000);
        }
    }

    public static String messageId(String prefix, int i) {
        return "m-" + prefix + "-" + i;
    }

    public static byte[] credit(String account) {
        return ("{\"account_id\":\"" + account + "\",\"amount\":1.00}").getBytes(StandardCharsets.UTF_8);
    }
}
