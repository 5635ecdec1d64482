/**
 * The ports through which idemkit's core talks to the world: {@code out} holds the driven ports
 * (stores, transport, dead-letter queue, alerts, clock) that adapters implement, {@code in} the use
 * cases that callers drive, and {@code service} the services that run those use cases on top of the
 * domain's decisions. No technology is named here; the contract suites in this module's test-jar
 * are what every adapter must pass unchanged.
 */
package dev.idemkit.ports;
