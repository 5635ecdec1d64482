package dev.idemkit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.io.support.SpringFactoriesLoader;

/** A refusal reaches Spring Boot's start-up report as itself, whatever it is wrapped in. */
class IdemkitStartupFailureAnalyzerTest {
    @Test
    void aRefusalWrappedAsAWebServerThatCouldNotStartIsReportedAsTheRefusal() {
        StartupRefusal refusal = new StartupRefusal("idemkit's tables belong in schema x but ...");
        Throwable wrapped = new IllegalStateException("Unable to start web server",
                new BeanCreationException("idemkitSchema", "Error creating bean with name 'idemkitSchema'", refusal));

        FailureAnalysis analysis = new IdemkitStartupFailureAnalyzer().analyze(wrapped);

        assertThat(analysis).isNotNull();
        assertThat(analysis.getDescription()).isEqualTo("idemkit refused the start: " + refusal.getMessage());
        assertThat(analysis.getCause()).isSameAs(refusal);
        assertThat(new IdemkitStartupFailureAnalyzer().analyze(new IllegalStateException("not ours"))).isNull();
    }

    @Test
    void springBootFindsTheAnalyzer() {
        // Boot's own analyzers that need constructor arguments are skipped here; Boot gives them theirs
        assertThat(SpringFactoriesLoader.forDefaultResourceLocation(getClass().getClassLoader())
                .load(FailureAnalyzer.class, (type, implementation, failure) -> { }))
                .anyMatch(a -> a instanceof IdemkitStartupFailureAnalyzer);
    }
}
