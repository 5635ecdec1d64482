package dev.idemkit.adapters.kafka;

import dev.idemkit.ports.out.Subscription;
import java.util.concurrent.CountDownLatch;

/**
 * A share-group consumer in a JVM of its own, for {@link KafkaShareDeliveryLimitIT}: it acks every record except one
 * whose message id starts with {@code poison}, which it holds (prints {@code HOLDING <id>} and never settles it) until
 * the test kills it. Args: bootstrap servers, work topic.
 */
public final class ShareHolderChild {
    private ShareHolderChild() {
    }

    public static void main(String[] args) throws Exception {
        KafkaSettings settings = KafkaSettings.defaults(args[0]).withPartitions(1)
                .withConsumption(KafkaSettings.Consumption.SHARE);
        KafkaMessageTransport transport = new KafkaMessageTransport(settings);
        Subscription s = transport.subscribe(args[1], d -> {
            String id = d.message().rawId();
            if (id != null && id.startsWith("poison")) {
                System.out.println("HOLDING " + id + " delivery=" + ((KafkaDelivery) d).deliveryCount());
                System.out.flush();
                return; // never settled: the process is killed holding it
            }
            d.ack();
            System.out.println("ACKED " + id);
            System.out.flush();
        });
        System.out.println("READY");
        System.out.flush();
        new CountDownLatch(1).await();
        s.close();
    }
}
