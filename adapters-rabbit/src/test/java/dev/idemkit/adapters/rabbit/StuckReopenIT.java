package dev.idemkit.adapters.rabbit;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.idemkit.ports.contract.Eventually;
import dev.idemkit.ports.out.Clock;
import dev.idemkit.ports.out.TransportException;
import dev.idemkit.testsupport.FreezableProxy;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The transport's publishing connection dies silently (a proxy stops forwarding it, both sockets open) while one
 * subscription must resubscribe (its queue deleted: the declaration it needs hangs on that connection) and another
 * gives a delivery back after its pause. The give-back must not wait for the stuck call, and the stuck call must be
 * abandoned well before heartbeat detection (two missed 15 s heartbeats). Before the fix both waited on one thread
 * until the heartbeat closed the connection.
 */
class StuckReopenIT extends RabbitITBase {
    private FreezableProxy proxy;
    private final ListAppender<ILoggingEvent> subscriptionLog = new ListAppender<>();

    @BeforeEach
    void startProxy() throws Exception {
        URI broker = RabbitFixtures.settings().uri();
        proxy = FreezableProxy.to(broker.getHost(), broker.getPort() > 0 ? broker.getPort() : 5672);
        subscriptionLog.start();
        ((ch.qos.logback.classic.Logger) LoggerFactory.getLogger(RabbitSubscription.class)).addAppender(subscriptionLog);
    }

    @AfterEach
    void stopProxy() {
        ((ch.qos.logback.classic.Logger) LoggerFactory.getLogger(RabbitSubscription.class))
                .detachAppender(subscriptionLog);
        proxy.close();
    }

    @Test
    void aCallStuckOnASilentlyDeadSocketDelaysNoGiveBackAndIsAbandonedWithinItsBound() throws Exception {
        String stuck = queue("stuck-resubscribe");
        String other = queue("give-back");
        URI broker = RabbitFixtures.settings().uri();
        URI viaProxy = URI.create(broker.getScheme() + "://" + broker.getRawUserInfo() + "@127.0.0.1:" + proxy.port()
                + broker.getRawPath());
        RabbitMessageTransport proxied = closeLater(new RabbitMessageTransport(RabbitFixtures.settings()
                .withUri(viaProxy).withConsumers(1), Clock.system(), RabbitFixtures.anyConnectionName("stuck")));
        assertThat(proxy.connections()).as("publishing connection first, then consuming").isEqualTo(2);
        List<Long> otherCalls = new CopyOnWriteArrayList<>();
        subscribe(proxied, stuck, d -> d.ack());
        subscribe(proxied, other, d -> {
            otherCalls.add(System.nanoTime());
            if (otherCalls.size() == 1) {
                throw new TransportException("its broker path failed"); // given back after the pause
            }
            d.ack();
        });

        proxy.freeze(0); // the publishing connection: declarations run there
        try (Channel ch = raw.createChannel()) {
            ch.queueDelete(stuck); // the broker cancels the consumer: it must declare the queue and resubscribe
        }
        Eventually.await(Duration.ofSeconds(10), "a resubscribe waiting on the dead publishing connection",
                StuckReopenIT::resubscribeWaitsOnTheBroker);
        long stuckAt = System.nanoTime();
        try (Channel ch = raw.createChannel()) {
            ch.basicPublish("", other, new AMQP.BasicProperties.Builder().messageId("m-1").deliveryMode(2).build(),
                    "body".getBytes(StandardCharsets.UTF_8));
        }

        Eventually.await(Duration.ofSeconds(60), "the delivery given back and delivered again",
                () -> otherCalls.size() >= 2);
        long givenBackAfter = Duration.ofNanos(otherCalls.get(1) - otherCalls.get(0)).toMillis();
        Eventually.await(Duration.ofSeconds(60), "the stuck resubscribe abandoned",
                () -> resubscribeFailures(stuck) > 0);
        long abandonedAfter = Duration.ofNanos(System.nanoTime() - stuckAt).toMillis();

        SoftAssertions soft = new SoftAssertions();
        soft.assertThat(givenBackAfter).as("ms from the failure to the redelivery (give-back pause 1 s)")
                .isLessThan(5_000);
        soft.assertThat(abandonedAfter).as("ms until the stuck call was abandoned (bound %s, heartbeat detection 30 s+)",
                RabbitConnections.RPC_TIMEOUT).isLessThan(RabbitConnections.RPC_TIMEOUT.toMillis() + 5_000);
        soft.assertAll();

        proxy.cut(0); // now the connection ends for real: it recovers, and the subscription comes back
        Eventually.await(Duration.ofSeconds(60), "the cancelled subscription consuming again", () -> {
            try (Channel ch = raw.createChannel()) {
                return ch.queueDeclarePassive(stuck).getConsumerCount() == 1;
            } catch (Exception e) {
                return false;
            }
        });
    }

    /** Whether a thread runs a resubscribe that waits for a broker's reply. */
    private static boolean resubscribeWaitsOnTheBroker() {
        for (Map.Entry<Thread, StackTraceElement[]> t : Thread.getAllStackTraces().entrySet()) {
            boolean resubscribing = false;
            boolean waiting = false;
            for (StackTraceElement frame : t.getValue()) {
                resubscribing |= frame.getMethodName().equals("resubscribe");
                waiting |= frame.getClassName().endsWith("BlockingCell") || frame.getMethodName().equals("getReply");
            }
            if (resubscribing && waiting) {
                return true;
            }
        }
        return false;
    }

    private long resubscribeFailures(String queue) {
        return subscriptionLog.list.stream().filter(e -> e.getFormattedMessage().contains("decision=resubscribe-failed")
                && e.getFormattedMessage().contains("queue=" + queue + " ")).count();
    }
}
