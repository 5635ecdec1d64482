package dev.idemkit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The root README's Spring Boot quick start is the sample service's method, character for character. */
class StarterReadmeTest {
    @Test
    void theRootReadmeShowsTheSampleServicesMethodVerbatim() throws IOException {
        String source = Files.readString(Path.of("src/test/java/dev/idemkit/spring/sample/Credits.java"),
                StandardCharsets.UTF_8);
        String begin = "// quick-start:begin\n";
        int from = source.indexOf(begin) + begin.length();
        String snippet = dedent(source.substring(from, source.indexOf("    // quick-start:end", from)));
        assertThat(snippet).contains("@Transactional").contains("inbox.runOnce(");
        assertThat(Files.readString(Path.of("../README.md"), StandardCharsets.UTF_8)).contains(snippet);
    }

    private static String dedent(String text) {
        int indent = text.lines().filter(l -> !l.isBlank()).mapToInt(l -> l.length() - l.stripLeading().length())
                .min().orElse(0);
        StringBuilder out = new StringBuilder();
        text.lines().forEach(l -> out.append(l.isBlank() ? "" : l.substring(indent)).append('\n'));
        return out.toString();
    }
}
