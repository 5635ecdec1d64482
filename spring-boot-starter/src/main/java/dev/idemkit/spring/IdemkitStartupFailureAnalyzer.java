package dev.idemkit.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Spring Boot's report of a failed start, for idemkit's refusals: the refusal itself as the description, and what to
 * change as the action, instead of the outermost wrapper ("Unable to start web server"). Registered in
 * {@code META-INF/spring.factories}; public because Spring Boot instantiates it from there.
 */
public final class IdemkitStartupFailureAnalyzer extends AbstractFailureAnalyzer<StartupRefusal> {
    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, StartupRefusal cause) {
        return new FailureAnalysis("idemkit refused the start: " + cause.getMessage(),
                "Change what the description names (the idemkit.* properties are in the starter's README), then"
                        + " start again.",
                cause);
    }
}
