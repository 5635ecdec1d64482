package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A read of the dead-letter queue takes its messages unacknowledged for a moment, and a depth is the broker's count
 * of ready messages: a depth read while another request reads the queue counted fewer, and the console's alert went
 * off and on while a page refreshed (a .ci/run of ConsoleServeIT read the alert's text empty). Reads and depths of
 * one instance are serialised, so a depth is never taken in the middle of a read.
 */
class DeadLetterDepthIT extends RabbitITBase {

    @Test
    @Timeout(60)
    void aDepthReadWhileAnotherRequestReadsTheQueueCountsEveryDeadLetter() throws Exception {
        String q = queue("dlq-depth");
        int n = 30;
        try (Channel ch = raw.createChannel()) {
            ch.confirmSelect();
            for (int i = 0; i < n; i++) {
                ch.basicPublish("", RabbitTopology.deadLetterQueue(q),
                        new AMQP.BasicProperties.Builder().messageId("dl-" + i).deliveryMode(2).build(), new byte[] {'x'});
            }
            ch.waitForConfirmsOrDie(5_000);
        }
        RabbitDeadLetterQueue dlq = transport.deadLetterQueue();
        assertThat(dlq.depth(q)).isEqualTo(n);
        ExecutorService reader = Executors.newSingleThreadExecutor();
        try {
            Future<?> reads = reader.submit(() -> {
                for (int round = 0; round < 40; round++) {
                    assertThat(dlq.peek(q, 100)).hasSize(n);
                }
            });
            List<Long> depths = new ArrayList<>();
            while (!reads.isDone()) {
                depths.add(dlq.depth(q));
            }
            reads.get(30, TimeUnit.SECONDS);
            assertThat(depths).as("depths read during 40 reads").isNotEmpty().containsOnly((long) n);
        } finally {
            reader.shutdownNow();
        }
    }
}
