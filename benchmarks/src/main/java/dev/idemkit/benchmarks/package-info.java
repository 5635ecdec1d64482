/**
 * The benchmarks ({@link dev.idemkit.benchmarks.BenchMain}), outside the app's jar: RabbitMQ -> PostgreSQL inbox + effect -> ack, one message per transaction and
 * batched per transaction, beside a hand-written JDBC baseline and RabbitMQ PerfTest's drain rate
 * measured in the same run; and replays of a stored {@code POST /payments} response over HTTP.
 * The batched case runs the ports' {@code BatchingConsumer} as {@code serve} ships it.
 */
package dev.idemkit.benchmarks;
