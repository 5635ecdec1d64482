package dev.idemkit.ports.out;

/**
 * A business effect that runs inside a store's unit of work. It must write only through {@code work}
 * (or be idempotent itself): anything it does elsewhere is not rolled back with the key.
 *
 * @param <U> the store's unit of work
 * @param <R> what the effect returns
 */
@FunctionalInterface
public interface Effect<U extends UnitOfWork, R> {
    R run(U work) throws Exception;
}
