/** The services that run the use cases: the consumer runtime, the idempotent request service, dead-letter operations. */
package dev.idemkit.ports.service;
