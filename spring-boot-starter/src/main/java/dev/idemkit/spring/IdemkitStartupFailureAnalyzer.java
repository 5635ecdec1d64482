package dev.idemkit.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Spring Boot's report of a failed start, for idemkit's refusals: the refusal itself as the description, and what to
 * change as the action, instead of the outermost wrapper ("Unable to start web server"). Registered in
 * {@code META-INF/spring.factories} (Spring Boot instantiates it from there, package-private as it is). A refusal
 * carries no database error: one that did would be hidden here, since Boot then logs the cause only at DEBUG.
 */
final class IdemkitStartupFailureAnalyzer extends AbstractFailureAnalyzer<StartupRefusal> {
    IdemkitStartupFailureAnalyzer() {
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, StartupRefusal cause) {
        return new FailureAnalysis("idemkit refused the start: " + cause.getMessage(),
                "Change what the description names (the idemkit.* properties are in the starter's README), then"
                        + " start again.",
                cause);
    }
}
