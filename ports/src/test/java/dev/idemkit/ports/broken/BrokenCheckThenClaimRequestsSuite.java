package dev.idemkit.ports.broken;

import dev.idemkit.ports.contract.LeasedRequestsContract;
import dev.idemkit.ports.out.IdempotencyRecords;

/**
 * The Idempotency-Key flow contract on leased claims over {@link CheckThenClaimIdempotencyRecords}; run only by
 * {@link ContractSuitesBiteTest}.
 */
public class BrokenCheckThenClaimRequestsSuite extends LeasedRequestsContract {
    private final CheckThenClaimIdempotencyRecords records = new CheckThenClaimIdempotencyRecords();

    @Override
    protected IdempotencyRecords records() {
        return records;
    }
}
