/**
 * Redis adapters (Redisson): the inbox store and the Idempotency-Key record store.
 *
 * <p>Every state transition is one Lua script (one round trip, atomic on the server). Keys that one
 * script touches share a hash tag, so the same code runs on a single server and on Redis Cluster. The inbox
 * scripts take many keys per call: a bulk batch, or the single deliveries of concurrent threads combined,
 * costs one script call per slot instead of one per key. Effects kept in Redis can skip the claim
 * ({@code runOnceStaged}: one round trip per delivery).
 * Values use {@code StringCodec} / {@code ByteArrayCodec}, never Kryo, so that redis-cli and other
 * languages read them.
 */
package dev.idemkit.adapters.redis;
