/**
 * Deliberately broken implementations (check-then-insert, key recorded outside the effect's unit of
 * work, non-atomic claim, {@code version <=}, insert that overwrites, retry that acknowledges) and the
 * suites that run the contracts against them. Only {@code ContractSuitesBiteTest} runs those suites (they
 * carry no Test suffix), asserting that the right contract tests fail.
 */
package dev.idemkit.ports.broken;
