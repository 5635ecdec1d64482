package dev.idemkit.app.http;

import java.time.Duration;

/**
 * Faults the API can inject around a payment, to show that retries stay harmless (exercise 2):
 * a slow charge (the client times out while the first request still runs), a delayed response (the
 * client times out after the charge committed), and a dropped response (the connection closes with no
 * answer after the charge committed). Production uses {@link #NONE}.
 */
public interface Faults {
    /** Where in a request a fault applies. */
    enum Stage { BEFORE_CHARGE, AFTER_CHARGE }

    /** What to do at a stage. */
    sealed interface Fault {
        record None() implements Fault {}

        record Delay(Duration duration) implements Fault {}

        /** Only meaningful after the charge: close the connection without a response. */
        record Drop() implements Fault {}
    }

    Fault.None NO_FAULT = new Fault.None();

    Faults NONE = (key, stage) -> NO_FAULT;

    Fault at(String idempotencyKey, Stage stage);
}
