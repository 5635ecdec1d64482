package dev.idemkit.app.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The design the code cites is in the repository: {@code docs/ARCHITECTURE.md} has its numbered sections, every
 * "docs/ARCHITECTURE.md section N" in a source file or README names one of them, and nothing cites a design document
 * outside the repository.
 */
class ArchitectureDocumentTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern CITATION = Pattern.compile("docs/ARCHITECTURE\\.md section (\\d+)");
    private static final Pattern HEADING = Pattern.compile("(?m)^## (\\d+)\\. ");

    @Test
    void everyCitedSectionExistsAndNothingCitesADocumentOutsideTheRepository() throws IOException {
        String doc = Files.readString(ROOT.resolve("docs/ARCHITECTURE.md"));
        Set<Integer> sections = new TreeSet<>();
        Matcher h = HEADING.matcher(doc);
        while (h.find()) {
            sections.add(Integer.parseInt(h.group(1)));
        }
        assertThat(sections).as("the document's numbered sections").containsAll(List.of(1, 3, 7, 8, 9, 12, 13, 15, 16));

        List<String> broken = new ArrayList<>();
        List<String> outside = new ArrayList<>();
        int citations = 0;
        for (Path file : sourcesAndReadmes()) {
            String text = Files.readString(file);
            Matcher m = CITATION.matcher(text);
            while (m.find()) {
                citations++;
                if (!sections.contains(Integer.parseInt(m.group(1)))) {
                    broken.add(ROOT.relativize(file) + ": " + m.group());
                }
            }
            if (text.contains("DESIGN.md") || text.contains("../shared")) {
                outside.add(ROOT.relativize(file).toString());
            }
        }
        assertThat(citations).as("citations found (the scan reads the modules)").isGreaterThan(10);
        assertThat(broken).as("citations of a section the document does not have").isEmpty();
        assertThat(outside).as("files citing a design outside the repository").isEmpty();
    }

    private static List<Path> sourcesAndReadmes() throws IOException {
        try (Stream<Path> all = Files.walk(ROOT)) {
            return all.filter(Files::isRegularFile)
                    .filter(p -> !p.toString().contains("/target/") && !p.toString().contains("/node_modules/")
                            && !p.toString().contains("/.git/"))
                    .filter(p -> (p.toString().endsWith(".java") && !p.endsWith("ArchitectureDocumentTest.java"))
                            || p.getFileName().toString().endsWith(".md"))
                    .toList();
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }
}
