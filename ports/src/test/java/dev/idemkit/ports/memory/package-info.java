/**
 * In-memory reference implementations of the driven ports, shipped in the ports test-jar: each store
 * makes its one atomic step under one lock and applies an effect's staged writes only on commit; the
 * transport delivers on a worker pool and schedules retries without blocking. They pass the contract
 * suites and stand in for the other side in adapter tests.
 */
package dev.idemkit.ports.memory;
