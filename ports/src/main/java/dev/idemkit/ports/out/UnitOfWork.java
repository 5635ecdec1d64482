package dev.idemkit.ports.out;

/**
 * The transaction that a store's atomic step and the business effect share. Each store adapter
 * offers its own subtype carrying its handle (a JPA {@code EntityManager}, a Redis transaction), so
 * that the effect writes through it and commits or rolls back together with the key.
 */
public interface UnitOfWork {}
