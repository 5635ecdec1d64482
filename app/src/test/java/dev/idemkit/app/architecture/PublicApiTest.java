package dev.idemkit.app.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import dev.idemkit.testsupport.ApiDocument;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docs/ARCHITECTURE.md section 16: the public top-level types of domain, ports and the adapters are exactly the ones
 * the document lists, and no other module names a type of theirs that it does not list. The starter's package is
 * checked the same way by StarterArchitectureTest (app does not see the starter).
 */
class PublicApiTest {
    private static final String ROOT = "dev.idemkit";
    private static final Set<String> LIBRARY_ROOTS = Set.of(ROOT + ".domain", ROOT + ".ports", ROOT + ".adapters");
    private static JavaClasses production;
    private static Map<String, Set<String>> api;

    @BeforeAll
    static void importEveryModule() {
        production = ArchitectureTest.importProduction();
        api = ApiDocument.publicTypes(ApiDocument.repositoryRoot());
    }

    @Test
    void thePublicTypesOfEachLibraryPackageAreTheDocumentedOnes() {
        Map<String, Set<String>> actual = new TreeMap<>();
        for (JavaClass c : production) {
            boolean library = LIBRARY_ROOTS.stream().anyMatch(r -> c.getPackageName().startsWith(r));
            if (library && c.getModifiers().contains(JavaModifier.PUBLIC) && c.isTopLevelClass()) {
                actual.computeIfAbsent(c.getPackageName(), p -> new TreeSet<>()).add(c.getSimpleName());
            }
        }
        Map<String, Set<String>> documented = new TreeMap<>(api);
        documented.remove(ROOT + ".spring");
        assertThat(actual.values().stream().mapToInt(Set::size).sum()).as("public library types found").isGreaterThan(100);
        assertThat(actual)
                .as("public top-level types per package (left: the classes; right: docs/ARCHITECTURE.md section 16)."
                        + " A type made public joins the table; a type that left the API leaves it")
                .isEqualTo(documented);
    }

    @Test
    void otherModulesNameOnlyTheListedApi() {
        IdemkitRules.otherModulesUseOnlyTheApi(ROOT, api).check(production);
    }
}
