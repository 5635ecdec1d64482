package dev.idemkit.ports.memory;

import dev.idemkit.ports.contract.IdempotencyRecordsContract;
import dev.idemkit.ports.out.IdempotencyRecords;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicReference;

/** The contract on the in-memory reference, whose clock the suite moves instead of waiting. */
class InMemoryIdempotencyRecordsContractTest extends IdempotencyRecordsContract {
    private final AtomicReference<Instant> clock = new AtomicReference<>(Instant.parse("2001-01-01T00:00:00Z"));
    private final InMemoryIdempotencyRecords records = new InMemoryIdempotencyRecords(clock::get);

    @Override
    protected IdempotencyRecords records() {
        return records;
    }

    @Override
    protected void elapse(Duration d) {
        clock.updateAndGet(t -> t.plus(d));
    }

    @Override
    protected boolean travelsInTime() {
        return true;
    }
}
