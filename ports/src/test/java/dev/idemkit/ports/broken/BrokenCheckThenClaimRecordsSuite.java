package dev.idemkit.ports.broken;

import dev.idemkit.ports.contract.IdempotencyRecordsContract;
import dev.idemkit.ports.out.IdempotencyRecords;

/** The Idempotency-Key records contract against {@link CheckThenClaimIdempotencyRecords}; run only by {@link ContractSuitesBiteTest}. */
public class BrokenCheckThenClaimRecordsSuite extends IdempotencyRecordsContract {
    private final CheckThenClaimIdempotencyRecords records = new CheckThenClaimIdempotencyRecords();

    @Override
    protected IdempotencyRecords records() {
        return records;
    }
}
