package dev.idemkit.app.crash;

/** A store and a transport that the crash harness runs together, both real. */
public enum Combination {
    PG_RABBIT(Store.POSTGRES, Transport.RABBIT),
    PG_SQS(Store.POSTGRES, Transport.SQS),
    REDIS_RABBIT(Store.REDIS, Transport.RABBIT),
    PG_KAFKA(Store.POSTGRES, Transport.KAFKA);

    public enum Store { POSTGRES, REDIS }

    public enum Transport { RABBIT, SQS, KAFKA }

    public final Store store;
    public final Transport transport;

    Combination(Store store, Transport transport) {
        this.store = store;
        this.transport = transport;
    }
}
