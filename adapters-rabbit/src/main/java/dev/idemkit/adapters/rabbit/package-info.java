/**
 * The RabbitMQ adapter (amqp-client): {@link dev.idemkit.adapters.rabbit.RabbitMessageTransport} with
 * publisher confirms, manual acks, per-queue topology with non-blocking retry buckets and a broker
 * dead-letter path, and {@link dev.idemkit.adapters.rabbit.RabbitDeadLetterQueue} for inspection and
 * approved redrive. No amqp-client type crosses a port: failures surface as
 * {@link dev.idemkit.ports.out.TransportException}.
 */
package dev.idemkit.adapters.rabbit;
