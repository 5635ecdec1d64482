package dev.idemkit.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The public API as docs/ARCHITECTURE.md section 16 lists it: package name to the simple names of its public
 * top-level types. The architecture tests of app and of the starter compare it with the classes.
 */
public final class ApiDocument {
    private static final Pattern ROW = Pattern.compile("(?m)^\\| `[a-z-]+` \\| `(dev\\.idemkit[a-z.]*)` \\| (.+) \\|$");
    private static final Pattern NAME = Pattern.compile("`([A-Z]\\w*)`");

    private ApiDocument() {}

    /** Reads the table from {@code docs/ARCHITECTURE.md} under the repository root {@code root}. */
    public static Map<String, Set<String>> publicTypes(Path root) {
        String doc;
        try {
            doc = Files.readString(root.resolve("docs/ARCHITECTURE.md"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int section = doc.indexOf("\n## 16. Public API");
        if (section < 0) {
            throw new IllegalStateException("docs/ARCHITECTURE.md has no section 16. Public API");
        }
        Map<String, Set<String>> api = new TreeMap<>();
        Matcher row = ROW.matcher(doc.substring(section));
        while (row.find()) {
            Set<String> names = api.computeIfAbsent(row.group(1), p -> new TreeSet<>());
            Matcher name = NAME.matcher(row.group(2));
            while (name.find()) {
                names.add(name.group(1));
            }
        }
        return api;
    }

    /** The repository root seen from a module's working directory (Maven runs tests in the module's directory). */
    public static Path repositoryRoot() {
        return Path.of("..").toAbsolutePath().normalize();
    }
}
