package dev.idemkit.spring;

/**
 * idemkit refused to let the service start: a setting or a listener would break a guarantee. The message says what is
 * wrong and what to change; {@link IdemkitStartupFailureAnalyzer} shows it as the reason the start failed, whatever
 * Spring wrapped it in (a web server that could not start, a bean that could not be created).
 */
final class StartupRefusal extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    StartupRefusal(String message) {
        super(message);
    }

    StartupRefusal(String message, Throwable cause) {
        super(message, cause);
    }
}
