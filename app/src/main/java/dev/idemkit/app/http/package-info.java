/** The HTTP side: the payments API with Idempotency-Key, client credentials, and the idempotent HTTP client. */
package dev.idemkit.app.http;
