package dev.idemkit.app.cluster;

import dev.idemkit.testsupport.RabbitCluster;
import org.junit.jupiter.api.Tag;

/**
 * {@link RabbitClusterIT} at full size (slow; about a minute and a half): 10,000 credits with 30 % duplicate ids, the
 * node leading the work queue killed twice (restarted in between). The full tier runs it
 * ({@code ./mvnw -B -T 2 verify -Pfull}).
 */
@Tag("slow")
class RabbitClusterSlowIT extends RabbitClusterIT {
    @Override
    int messages() {
        return Integer.getInteger("idemkit.cluster.messages", 10_000);
    }

    @Override
    int kills() {
        return Integer.getInteger("idemkit.cluster.kills", 2);
    }
}
