/** Micrometer metrics in Prometheus format: consumer decisions, DLQ depth, store latency, HTTP replays. */
package dev.idemkit.app.metrics;
