package dev.idemkit.app.crash;

/** A store and a transport that the crash harness runs together, both real. */
public enum Combination {
    PG_RABBIT(Store.POSTGRES, Transport.RABBIT),
    PG_SQS(Store.POSTGRES, Transport.SQS),
    REDIS_RABBIT(Store.REDIS, Transport.RABBIT),
    PG_KAFKA(Store.POSTGRES, Transport.KAFKA),
    /** Kafka with the work topic consumed by a share group (KIP-932); retry topics by the consumer group. */
    PG_KAFKA_SHARE(Store.POSTGRES, Transport.KAFKA, true),
    /** Kafka's consumer group with its positions kept in the PostgreSQL inbox's transactions (offsets in the database). */
    PG_KAFKA_DB(Store.POSTGRES, Transport.KAFKA, false, true);

    public enum Store { POSTGRES, REDIS }

    public enum Transport { RABBIT, SQS, KAFKA }

    public final Store store;
    public final Transport transport;
    /** Kafka only: the work topic is consumed by its share group. */
    public final boolean share;
    /** Kafka only: the consumer group's positions are kept in the inbox's transactions. */
    public final boolean positionsInStore;

    Combination(Store store, Transport transport) {
        this(store, transport, false);
    }

    Combination(Store store, Transport transport, boolean share) {
        this(store, transport, share, false);
    }

    Combination(Store store, Transport transport, boolean share, boolean positionsInStore) {
        this.store = store;
        this.transport = transport;
        this.share = share;
        this.positionsInStore = positionsInStore;
    }
}
