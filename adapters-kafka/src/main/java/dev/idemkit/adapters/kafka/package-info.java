/**
 * Kafka adapters (kafka-clients): {@link dev.idemkit.adapters.kafka.KafkaMessageTransport} (auto-commit off, a
 * partition's offset committed only below records that are all settled, partitions in parallel and each in order,
 * non-blocking retries through delay-bucketed retry topics, a dead-letter topic with origin and history, an
 * idempotent producer) and {@link dev.idemkit.adapters.kafka.KafkaDeadLetterQueue} (depth, inspection without
 * consuming, approved redrive recorded in a topic of its own, since Kafka cannot delete one record).
 */
package dev.idemkit.adapters.kafka;
