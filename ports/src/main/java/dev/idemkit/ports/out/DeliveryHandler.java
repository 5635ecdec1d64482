package dev.idemkit.ports.out;

/** Receives deliveries from a transport; must settle each one (ack, retry or dead-letter). */
@FunctionalInterface
public interface DeliveryHandler {
    void onDelivery(Delivery delivery);
}
