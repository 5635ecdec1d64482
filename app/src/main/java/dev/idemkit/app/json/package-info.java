/** Canonical JSON (sorted keys, numbers as written), shared by the HTTP API, the payments and the consumers. */
package dev.idemkit.app.json;
