package dev.idemkit.adapters.postgres;

import java.util.Optional;

/** Test helper: credits accounts through the unit of work (a deliberately NON-idempotent increment). */
final class Accounts {
    static final String CREDIT = """
            INSERT INTO accounts (id, balance) VALUES (:id, :amount)
            ON CONFLICT (id) DO UPDATE SET balance = accounts.balance + excluded.balance
            """;

    private final TestDatabase pg;

    Accounts(TestDatabase pg) {
        this.pg = pg;
    }

    /** {@code balance = balance + amount}, creating the account at {@code amount} when absent. */
    static void credit(JpaUnitOfWork work, String account, long amount) {
        work.entityManager().createNativeQuery(CREDIT)
                .setParameter("id", account)
                .setParameter("amount", amount)
                .executeUpdate();
    }

    /** The committed balance, 0 when the account does not exist. */
    long balance(String account) {
        return pg.db().inTransaction(work -> Optional.ofNullable(work.entityManager().find(Account.class, account))
                .map(Account::balance).orElse(0L));
    }
}
