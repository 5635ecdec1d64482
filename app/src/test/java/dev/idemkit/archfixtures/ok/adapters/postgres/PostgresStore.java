package dev.idemkit.archfixtures.ok.adapters.postgres;

import dev.idemkit.archfixtures.ok.domain.PureDecision;
import dev.idemkit.archfixtures.ok.ports.Store;

/** Conforms: an adapter implementing a port, naming only its own technology. */
public class PostgresStore implements Store {
    @Override
    public PureDecision decision(String key) {
        return new PureDecision();
    }

    public Class<?> driver() {
        return org.postgresql.Driver.class;
    }
}
