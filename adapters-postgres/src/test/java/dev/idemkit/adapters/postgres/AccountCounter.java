package dev.idemkit.adapters.postgres;

import dev.idemkit.ports.contract.EffectCounter;

/** The contract suites' non-idempotent effect on PostgreSQL: {@code balance = balance + ?} through the unit of work. */
final class AccountCounter implements EffectCounter<JpaUnitOfWork> {
    private final TestDatabase pg;

    AccountCounter(TestDatabase pg) {
        this.pg = pg;
    }

    @Override
    public void add(JpaUnitOfWork work, String name, long amount) {
        Accounts.credit(work, name, amount);
    }

    @Override
    public long read(String name) {
        return pg.queryLong("SELECT coalesce(sum(balance), 0) FROM accounts WHERE id = ?", name);
    }
}
