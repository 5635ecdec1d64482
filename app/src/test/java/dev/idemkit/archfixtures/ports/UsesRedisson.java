package dev.idemkit.archfixtures.ports;

/** Violates "ports use domain and the JDK only" and Redis confinement: a port naming a technology. */
public interface UsesRedisson {
    org.redisson.api.RedissonClient client();
}
