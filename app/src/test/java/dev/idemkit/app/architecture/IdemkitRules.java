package dev.idemkit.app.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import java.util.Map;
import java.util.Set;

/**
 * The rules of docs/ARCHITECTURE.md section 1, built for a root package so that the same rule checks the real
 * code ({@code dev.idemkit}) and the violating fixtures ({@code dev.idemkit.archfixtures}).
 */
final class IdemkitRules {
    private IdemkitRules() {}

    static ArchRule domainUsesJdkOnly(String root) {
        return classes().that().resideInAPackage(root + ".domain..")
                .should().onlyDependOnClassesThat().resideInAnyPackage("java..", root + ".domain..")
                .because("the domain jar must be reusable alone: the JDK only (docs/ARCHITECTURE.md section 1)");
    }

    static ArchRule domainDoesNoIoNorClockNorRandomness(String root) {
        return noClasses().that().resideInAPackage(root + ".domain..")
                .should().dependOnClassesThat().resideInAnyPackage("java.io..", "java.net..", "java.sql..",
                        "java.nio.file..", "java.nio.channels..", "java.util.logging..", "java.util.concurrent..")
                .orShould().callMethod(java.time.Instant.class, "now")
                .orShould().callMethod(System.class, "currentTimeMillis")
                .orShould().callMethod(System.class, "nanoTime")
                .orShould().callMethod(Math.class, "random")
                .orShould().callConstructor(java.util.Random.class)
                .orShould().dependOnClassesThat().areAssignableTo(java.util.Random.class)
                .because("the domain decides; time and randomness are passed in and I/O belongs to adapters");
    }

    static ArchRule portsUseDomainAndJdkOnly(String root) {
        return classes().that().resideInAPackage(root + ".ports..")
                .should().onlyDependOnClassesThat().resideInAnyPackage("java..", root + ".domain..", root + ".ports..")
                .because("ports name no technology: domain and the JDK only (docs/ARCHITECTURE.md section 1)");
    }

    static ArchRule layers(String root) {
        return layeredArchitecture().consideringOnlyDependenciesInLayers()
                .withOptionalLayers(true)
                .layer("Domain").definedBy(root + ".domain..")
                .layer("Ports").definedBy(root + ".ports..")
                .layer("Adapters").definedBy(root + ".adapters..")
                .layer("Exercises").definedBy(root + ".exercises..")
                .layer("App").definedBy(root + ".app..")
                .layer("Benchmarks").definedBy(root + ".benchmarks..")
                .whereLayer("Benchmarks").mayNotBeAccessedByAnyLayer()
                .whereLayer("App").mayOnlyBeAccessedByLayers("Benchmarks")
                .whereLayer("Exercises").mayOnlyBeAccessedByLayers("App", "Benchmarks")
                .whereLayer("Adapters").mayOnlyBeAccessedByLayers("App", "Benchmarks")
                .whereLayer("Ports").mayOnlyBeAccessedByLayers("Adapters", "Exercises", "App", "Benchmarks")
                .whereLayer("Domain").mayOnlyBeAccessedByLayers("Ports", "Adapters", "Exercises", "App", "Benchmarks")
                .because("domain <- ports <- adapters | exercises <- app <- benchmarks (docs/ARCHITECTURE.md section 1)");
    }

    static ArchRule adaptersAreIndependent(String root) {
        return slices().matching(root + ".adapters.(*)..").namingSlices("adapter $1")
                .should().notDependOnEachOther()
                .because("no adapter depends on another adapter (docs/ARCHITECTURE.md section 1)");
    }

    static ArchRule adaptersDoNotKnowTheApp(String root) {
        return noClasses().that().resideInAPackage(root + ".adapters..")
                .should().dependOnClassesThat().resideInAPackage(root + ".app..")
                .because("adapters are wired by app, never the other way round");
    }

    static ArchRule exercisesNameNoAdapterNorTheApp(String root) {
        return noClasses().that().resideInAPackage(root + ".exercises..")
                .should().dependOnClassesThat().resideInAnyPackage(root + ".adapters..", root + ".app..")
                .because("the exercises are checks over ports: what they need from an engine is handed to them");
    }

    static ArchRule exampleServiceNamesNoAdapter(String root) {
        return noClasses().that().resideInAPackage(root + ".app..")
                .and().resideOutsideOfPackages(root + ".app.wiring..", root + ".app.config..")
                .should().dependOnClassesThat().resideInAPackage(root + ".adapters..")
                .because("app.wiring is the composition root, the only package that names adapters (app.config names"
                        + " only their settings)");
    }

    static ArchRule configNamesOnlyAdapterSettings(String root) {
        return noClasses().that().resideInAPackage(root + ".app.config..")
                .should().dependOnClassesThat(com.tngtech.archunit.base.DescribedPredicate.describe(
                        "are adapter classes other than their settings",
                        (com.tngtech.archunit.core.domain.JavaClass c) -> c.getPackageName().startsWith(root + ".adapters.")
                                && !c.getSimpleName().endsWith("Settings")
                                && !c.getName().contains("Settings$")))
                .because("app.config refuses a bad value at resolve with the adapters' own limits and parsers (their"
                        + " *Settings), and constructs nothing");
    }

    static ArchRule nothingDependsOnBenchmarks(String root) {
        return noClasses().that().resideOutsideOfPackage(root + ".benchmarks..")
                .should().dependOnClassesThat().resideInAPackage(root + ".benchmarks..")
                .because("benchmarks measure the shipped paths; nothing ships with them (docs/ARCHITECTURE.md section 1)");
    }

    static ArchRule noProductionTypeTakesAFaultInjector(String root) {
        return noClasses().that().resideInAPackage(root + "..").and().resideOutsideOfPackage(root + ".exercises..")
                .should().dependOnClassesThat().haveSimpleNameContaining("Fault")
                .because("no production signature carries a test hook: exercises and tests decorate through the ports");
    }

    static ArchRule noPackageCycles(String root) {
        return slices().matching(root + ".(**)").should().beFreeOfCycles()
                .because("package cycles make modules impossible to split");
    }

    static ArchRule adapterClassesNamedOnlyInTheirModuleAndApp(String root) {
        return noClasses().that().resideOutsideOfPackages(root + ".adapters..", root + ".app..")
                .should().dependOnClassesThat().resideInAPackage(root + ".adapters..")
                .because("only app assembles adapters; the core sees ports");
    }

    /** A technology's packages may be named only inside its adapter. */
    static ArchRule technologyConfined(String root, String adapter, String... technologyPackages) {
        return noClasses().that().resideInAPackage(root + "..")
                .and().resideOutsideOfPackage(root + ".adapters." + adapter + "..")
                .should().dependOnClassesThat().resideInAnyPackage(technologyPackages)
                .because(String.join(", ", technologyPackages) + " belong to adapters-" + adapter + " alone");
    }

    /**
     * A class may name another module's types only where docs/ARCHITECTURE.md section 16 lists them: {@code api}
     * maps each documented package to its public types. A module is {@code root.<name>}, or
     * {@code root.adapters.<name>} for an adapter; inside its own module a class may name anything javac lets it.
     */
    static ArchRule otherModulesUseOnlyTheApi(String root, Map<String, Set<String>> api) {
        return classes().that().resideInAPackage(root + "..")
                .should(new ArchCondition<JavaClass>("name only the listed API types of other modules") {
                    @Override
                    public void check(JavaClass origin, ConditionEvents events) {
                        String from = moduleOf(root, origin.getPackageName());
                        for (Dependency d : origin.getDirectDependenciesFromSelf()) {
                            JavaClass target = d.getTargetClass().getBaseComponentType();
                            JavaClass top = target;
                            while (top.getEnclosingClass().isPresent()) {
                                top = top.getEnclosingClass().get();
                            }
                            Set<String> listed = api.get(top.getPackageName());
                            if (listed == null || moduleOf(root, top.getPackageName()).equals(from)
                                    || listed.contains(top.getSimpleName())) {
                                continue;
                            }
                            events.add(SimpleConditionEvent.violated(origin, d.getDescription()
                                    + ": " + top.getName() + " is not in the API of its module"));
                        }
                    }
                })
                .because("other modules use only the public API (docs/ARCHITECTURE.md section 16)");
    }

    private static String moduleOf(String root, String pkg) {
        if (!pkg.startsWith(root + ".")) {
            return pkg;
        }
        String[] parts = pkg.substring(root.length() + 1).split("\\.");
        return parts[0].equals("adapters") && parts.length > 1 ? "adapters." + parts[1] : parts[0];
    }
}
