package dev.idemkit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The root README's Spring Boot snippets are code that runs under test, character for character. */
class StarterReadmeTest {
    /**
     * The root README's Spring Boot quick start is the quick-start service that {@link QuickStartIT} runs, and its
     * outbox example the order service that {@link OutboxSampleServiceIT} runs: each file without the package line,
     * and the properties, character for character.
     */
    @ParameterizedTest
    @ValueSource(strings = {"java/dev/idemkit/spring/quickstart/CreditService.java",
        "java/dev/idemkit/spring/quickstart/CreditListener.java",
        "java/dev/idemkit/spring/quickstart/ImportedCredits.java", "resources/quickstart.properties",
        "java/dev/idemkit/spring/outboxsample/Orders.java", "resources/outbox.properties"})
    void theRootReadmeShowsTheQuickStartServiceVerbatim(String file) throws IOException {
        String text = Files.readString(Path.of("src/test/" + file), StandardCharsets.UTF_8);
        String shown = file.endsWith(".java") ? text.substring(text.indexOf("\n\n") + 2) : text;
        assertThat(shown).as(file).contains(file.endsWith(".java") ? "import " : "idemkit.");
        assertThat(Files.readString(Path.of("../README.md"), StandardCharsets.UTF_8)).as(file).contains(shown);
    }
}
