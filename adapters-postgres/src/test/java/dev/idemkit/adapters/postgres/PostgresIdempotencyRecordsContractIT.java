package dev.idemkit.adapters.postgres;

import dev.idemkit.ports.contract.IdempotencyRecordsContract;
import dev.idemkit.ports.out.IdempotencyRecords;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The Idempotency-Key records contract, unchanged, against PostgreSQL. */
class PostgresIdempotencyRecordsContractIT extends IdempotencyRecordsContract {
    private static TestDatabase pg;
    private static PostgresIdempotencyRecords records;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start(16);
        records = new PostgresIdempotencyRecords(pg.db());
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    @Override
    protected IdempotencyRecords records() {
        return records;
    }
}
