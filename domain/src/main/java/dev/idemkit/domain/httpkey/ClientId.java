package dev.idemkit.domain.httpkey;

import dev.idemkit.domain.KeyRules;

/** The authenticated client a key belongs to; keys are only ever looked up within one client. */
public record ClientId(String value) {
    public ClientId {
        KeyRules.requireValid("client id", value);
    }

    public static ClientId of(String value) {
        return new ClientId(value);
    }

    @Override
    public String toString() {
        return value;
    }
}
