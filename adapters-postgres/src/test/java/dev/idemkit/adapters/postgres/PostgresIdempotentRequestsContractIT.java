package dev.idemkit.adapters.postgres;

import dev.idemkit.ports.contract.IdempotentRequestsContract;
import dev.idemkit.ports.out.IdempotencyClaims;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The one Idempotency-Key flow on PostgreSQL: the effect (a credit to an account named after the test's tag) runs in
 * the claim's transaction, so it commits and rolls back with the key.
 */
class PostgresIdempotentRequestsContractIT extends IdempotentRequestsContract<JpaUnitOfWork> {
    private static final int PARALLEL = 12;
    private static TestDatabase pg;
    private static PostgresIdempotencyClaims claims;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start(PARALLEL + 4);
        claims = new PostgresIdempotencyClaims(pg.db());
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    @Override
    protected IdempotencyClaims<JpaUnitOfWork> claims() {
        return claims;
    }

    @Override
    protected void recordEffect(JpaUnitOfWork work, String tag) {
        Accounts.credit(work, tag, 1);
    }

    @Override
    protected long keptEffects(String tag) {
        return new Accounts(pg).balance(tag);
    }

    @Override
    protected boolean effectSharesTheClaimsTransaction() {
        return true;
    }

    /** Each waiting attempt holds a pooled connection (a row lock): the pool has room for this many and a few more. */
    @Override
    protected int parallelism() {
        return PARALLEL;
    }
}
