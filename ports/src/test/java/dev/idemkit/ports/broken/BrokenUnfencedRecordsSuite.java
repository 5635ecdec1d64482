package dev.idemkit.ports.broken;

import dev.idemkit.ports.contract.IdempotencyRecordsContract;
import dev.idemkit.ports.out.IdempotencyRecords;

/** The Idempotency-Key records contract against {@link UnfencedIdempotencyRecords}; run only by {@link ContractSuitesBiteTest}. */
public class BrokenUnfencedRecordsSuite extends IdempotencyRecordsContract {
    private final UnfencedIdempotencyRecords records = new UnfencedIdempotencyRecords();

    @Override
    protected IdempotencyRecords records() {
        return records;
    }
}
