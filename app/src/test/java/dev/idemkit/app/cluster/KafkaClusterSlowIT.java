package dev.idemkit.app.cluster;

import org.junit.jupiter.api.Tag;

/**
 * {@link KafkaClusterIT} at full size (slow): 10,000 credits with 30 % duplicate ids per consumption, the node leading
 * the work topic's partition 0 killed twice (restarted and back in sync in between). The full tier runs it
 * ({@code ./mvnw -B -T 2 verify -Pfull}).
 */
@Tag("slow")
class KafkaClusterSlowIT extends KafkaClusterIT {
    @Override
    int messages() {
        return Integer.getInteger("idemkit.cluster.messages", 10_000);
    }

    @Override
    int kills() {
        return Integer.getInteger("idemkit.cluster.kills", 2);
    }
}
