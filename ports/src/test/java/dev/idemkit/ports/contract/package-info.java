/**
 * Contract suites, shipped in the ports test-jar: one abstract JUnit 5 class per driven port
 * ({@link dev.idemkit.ports.contract.InboxStoreContract}, {@link dev.idemkit.ports.contract.VersionedStoreContract},
 * {@link dev.idemkit.ports.contract.UpsertStoreContract}, {@link dev.idemkit.ports.contract.IdempotencyRecordsContract},
 * {@link dev.idemkit.ports.contract.MessageTransportContract}) that every adapter extends and passes unchanged.
 * Properties run on QuickTheories inside plain {@code @Test} methods and compare the real store with the
 * pure domain model. Every test and example works on fresh names, so stores need no cleanup between them;
 * a transport deletes the queues a test made ({@code MessageTransportContract} calls {@code deleteQueue}).
 */
package dev.idemkit.ports.contract;
