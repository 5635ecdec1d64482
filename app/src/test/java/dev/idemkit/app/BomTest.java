package dev.idemkit.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The BOM names every published module of the build and nothing else, each at the build's version. */
class BomTest {
    /** Modules that are not published: the runnable, its checks, the benchmarks, test tooling, the BOM itself. */
    private static final Set<String> UNPUBLISHED = Set.of("bom", "kafka-test-broker", "test-support", "exercises", "app", "benchmarks",
            "benchmarks-spring");

    @Test
    void theBomPinsEveryPublishedModule() throws IOException {
        String parent = Files.readString(Path.of("../pom.xml"), StandardCharsets.UTF_8);
        Set<String> published = new TreeSet<>();
        Matcher modules = Pattern.compile("<module>([^<]+)</module>").matcher(parent);
        while (modules.find()) {
            if (!UNPUBLISHED.contains(modules.group(1))) {
                published.add("idemkit-" + modules.group(1));
            }
        }
        String bom = Files.readString(Path.of("../bom/pom.xml"), StandardCharsets.UTF_8);
        Set<String> pinned = new TreeSet<>();
        Matcher deps = Pattern.compile("<artifactId>(idemkit-[^<]+)</artifactId>\\s*<version>\\$\\{project.version}"
                + "</version>").matcher(bom);
        while (deps.find()) {
            pinned.add(deps.group(1));
        }
        assertThat(published).as("published modules").contains("idemkit-domain", "idemkit-spring-boot-starter");
        assertThat(pinned).as("modules pinned by the BOM").isEqualTo(published);
        Matcher version = Pattern.compile("<artifactId>idemkit-parent</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(parent);
        assertThat(version.find()).isTrue();
        assertThat(bom).as("the BOM's own version is the build's")
                .contains("<artifactId>idemkit-bom</artifactId>\n  <version>" + version.group(1) + "</version>");
    }
}
