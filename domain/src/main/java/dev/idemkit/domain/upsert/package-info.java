/**
 * The upsert strategy: a creation keyed by its natural business key is inserted only when the key is
 * absent ({@code INSERT ... ON CONFLICT (key) DO NOTHING}); a second insert is a duplicate.
 */
package dev.idemkit.domain.upsert;
