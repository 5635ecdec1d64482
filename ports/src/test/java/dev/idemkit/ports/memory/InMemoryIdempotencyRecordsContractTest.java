package dev.idemkit.ports.memory;

import dev.idemkit.ports.contract.IdempotencyRecordsContract;
import dev.idemkit.ports.out.IdempotencyRecords;

class InMemoryIdempotencyRecordsContractTest extends IdempotencyRecordsContract {
    private final InMemoryIdempotencyRecords records = new InMemoryIdempotencyRecords();

    @Override
    protected IdempotencyRecords records() {
        return records;
    }
}
