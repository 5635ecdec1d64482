package dev.idemkit.archfixtures.domain;

/** Violates "domain uses the JDK only": names a logging framework. */
public class LogsWithSlf4j {
    private final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(LogsWithSlf4j.class);

    public void decide() {
        log.info("deciding");
    }
}
