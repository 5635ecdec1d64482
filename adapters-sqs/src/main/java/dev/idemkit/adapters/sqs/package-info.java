/**
 * SQS adapters (AWS SDK v2, sync client): {@link dev.idemkit.adapters.sqs.SqsMessageTransport} (long
 * polling, batch receive and delete, bounded concurrent handlers, visibility-timeout retries with a
 * heartbeat for slow handlers, dead letters with their history as message attributes, FIFO content
 * deduplication) and {@link dev.idemkit.adapters.sqs.SqsDeadLetterQueue} (depth, inspection without
 * consuming, approved redrive). The adapter only knows the SQS API and an endpoint: it runs unchanged
 * against AWS and against a local SQS-compatible server.
 */
package dev.idemkit.adapters.sqs;
