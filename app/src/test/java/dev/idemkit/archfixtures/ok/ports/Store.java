package dev.idemkit.archfixtures.ok.ports;

import dev.idemkit.archfixtures.ok.domain.PureDecision;

/** Conforms: a port naming the domain and the JDK only. */
public interface Store {
    PureDecision decision(String key);
}
