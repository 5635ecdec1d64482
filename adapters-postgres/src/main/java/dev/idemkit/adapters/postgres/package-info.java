/**
 * The PostgreSQL adapter: inbox, versioned, upsert and Idempotency-Key record stores on
 * jakarta.persistence + Hibernate 7 and plain JDBC in the same transaction, bootstrapped without any
 * framework ({@link dev.idemkit.adapters.postgres.PostgresDatabase}: HikariCP, Flyway, Hibernate).
 *
 * <p>Every store's atomic step is one SQL statement whose affected-row count is the decision; the
 * domain's pure functions ({@code Inbox.decide}, {@code Versioned.decide}, {@code KeyMachine.decide})
 * turn the count into an outcome. The business effect receives the open {@link
 * dev.idemkit.adapters.postgres.JpaUnitOfWork}, so a user's own entities commit or roll back with the
 * key. This package holds no business entities.
 */
package dev.idemkit.adapters.postgres;
