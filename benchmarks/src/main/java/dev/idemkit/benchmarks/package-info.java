/**
 * The benchmarks ({@link dev.idemkit.benchmarks.BenchMain}), outside the app's jar: RabbitMQ -> PostgreSQL inbox + effect -> ack, one message per transaction and
 * batched per transaction, beside a hand-written JDBC baseline and RabbitMQ PerfTest's drain rate
 * measured in the same run; and replays of a stored {@code POST /payments} response over HTTP.
 * {@link dev.idemkit.benchmarks.BatchingHandler} is the batched consumer (acks after commit).
 */
package dev.idemkit.benchmarks;
