package dev.idemkit.ports.memory;

import dev.idemkit.ports.contract.LeasedRequestsContract;
import dev.idemkit.ports.out.IdempotencyRecords;

/** The one Idempotency-Key flow on the in-memory reference records, through leased claims. */
class InMemoryIdempotentRequestsContractTest extends LeasedRequestsContract {
    private final InMemoryIdempotencyRecords records = new InMemoryIdempotencyRecords();

    @Override
    protected IdempotencyRecords records() {
        return records;
    }

    /** No connection pool to size: the seed's 100 parallel same-key requests. */
    @Override
    protected int parallelism() {
        return 100;
    }
}
