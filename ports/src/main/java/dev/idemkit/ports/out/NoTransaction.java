package dev.idemkit.ports.out;

/**
 * The unit of work of a store whose Idempotency-Key claim cannot share a transaction with the request's effect (Redis,
 * or any store behind {@link IdempotencyRecords}): the effect runs on its own and its response is stored after it. A
 * crash between the two leaves the claim to lapse, so an effect outside the store is "duplicates reduced, not
 * excluded". It carries nothing.
 */
public final class NoTransaction implements UnitOfWork {
    public static final NoTransaction INSTANCE = new NoTransaction();

    private NoTransaction() {}

    @Override
    public String toString() {
        return "NoTransaction";
    }
}
