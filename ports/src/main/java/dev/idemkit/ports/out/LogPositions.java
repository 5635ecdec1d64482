package dev.idemkit.ports.out;

import java.util.Optional;

/**
 * The positions a store wrote in its transactions ({@link InboxStore#keepsPositions}), read by a consumer when it is
 * given a partition. Thread-safe.
 */
public interface LogPositions {
    /**
     * The stored position of {@code group} in {@code topic}-{@code partition}, with the log id it was written for (the
     * caller ignores one of another log). Empty when none was stored.
     *
     * @throws StoreUnavailableException when the store cannot be read
     */
    Optional<LogPosition> read(String group, String topic, int partition);
}
