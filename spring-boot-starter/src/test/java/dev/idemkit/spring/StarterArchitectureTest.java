package dev.idemkit.spring;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import dev.idemkit.testsupport.ApiDocument;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docs/ARCHITECTURE.md section 1 for the starter: it sits beside app, over ports and domain, with the PostgreSQL,
 * RabbitMQ and Kafka adapters as optional dependencies (the RabbitMQ and Kafka ones named only by their idempotent
 * listeners' support, so a service without them runs everything else); nothing of idemkit's core or adapters knows Spring, and the starter knows
 * no other module.
 */
class StarterArchitectureTest {
    private static final String ROOT = "dev.idemkit";
    private static JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(location -> !location.contains("-tests.jar")).importPackages(ROOT);
    }

    @Test
    void theStarterAndTheModulesItUsesAreImported() {
        for (String pkg : new String[] {"domain", "ports", "adapters.postgres", "adapters.rabbit", "adapters.kafka",
                "spring"}) {
            assertThat(classes.stream().anyMatch(c -> c.getPackageName().startsWith(ROOT + "." + pkg)))
                    .as("classes of %s imported", pkg).isTrue();
        }
    }

    @Test
    void onlyTheStarterNamesSpring() {
        ArchRule rule = noClasses().that().resideInAPackage(ROOT + "..").and().resideOutsideOfPackage(ROOT + ".spring..")
                .should().dependOnClassesThat().resideInAnyPackage("org.springframework..")
                .because("domain, ports and adapters stay framework-free; Spring lives in spring-boot-starter");
        rule.check(classes);
    }

    @Test
    void theStarterNamesNoOtherAdapterNorTheAppNorTheExercises() {
        ArchRule rule = noClasses().that().resideInAPackage(ROOT + ".spring..")
                .should().dependOnClassesThat().resideInAnyPackage(ROOT + ".app..", ROOT + ".exercises..",
                        ROOT + ".benchmarks..", ROOT + ".adapters.redis..", ROOT + ".adapters.sqs..")
                .because("the starter depends on ports, domain and, optionally, adapters-postgres, adapters-rabbit and"
                        + " adapters-kafka (docs/ARCHITECTURE.md section 1)");
        rule.check(classes);
    }

    @Test
    void onlyTheIdempotentKafkaListenersNameTheKafkaAdapter() {
        ArchRule rule = noClasses().that().resideInAPackage(ROOT + ".spring..")
                .and().doNotHaveSimpleName("IdempotentKafkaListenerAdvice")
                .and().doNotHaveSimpleName("KafkaListenerRetries")
                .and().haveNameNotMatching(".*\\.IdemkitKafkaAutoConfiguration(\\$.*)?")
                .should().dependOnClassesThat().resideInAPackage(ROOT + ".adapters.kafka..")
                .because("adapters-kafka is optional: only the idempotent Kafka listeners' classes, loaded when it is"
                        + " there, may name it");
        rule.check(classes);
    }

    @Test
    void onlyTheIdempotentListenersNameTheRabbitAdapter() {
        ArchRule rule = noClasses().that().resideInAPackage(ROOT + ".spring..")
                .and().doNotHaveSimpleName("IdempotentListenerAdvice")
                .and().doNotHaveSimpleName("IdempotentListenersCheck")
                .and().doNotHaveSimpleName("SpringRabbitUri")
                .and().haveNameNotMatching(".*\\.IdemkitRabbitAutoConfiguration(\\$.*)?")
                .and().doNotHaveSimpleName("IdemkitOutboxRabbitAutoConfiguration")
                .should().dependOnClassesThat().resideInAPackage(ROOT + ".adapters.rabbit..")
                .because("adapters-rabbit is optional: only the idempotent listeners' classes and the outbox relay's"
                        + " transport configuration, loaded when it is there, may name it");
        rule.check(classes);
    }

    @Test
    void theCoreNeverNamesTheStarter() {
        ArchRule rule = noClasses().that().resideInAnyPackage(ROOT + ".domain..", ROOT + ".ports..", ROOT + ".adapters..")
                .should().dependOnClassesThat().resideInAPackage(ROOT + ".spring..")
                .because("the starter builds on the core, never the other way round");
        rule.check(classes);
    }

    /** docs/ARCHITECTURE.md section 16 for the starter: its public types are the listed ones. */
    @Test
    void theStartersPublicTypesAreTheDocumentedOnes() {
        Set<String> documented = ApiDocument.publicTypes(ApiDocument.repositoryRoot()).get(ROOT + ".spring");
        Set<String> actual = classes.stream()
                .filter(c -> c.getPackageName().equals(ROOT + ".spring") && c.isTopLevelClass()
                        && c.getModifiers().contains(JavaModifier.PUBLIC))
                .map(JavaClass::getSimpleName).collect(Collectors.toCollection(TreeSet::new));
        assertThat(actual).as("the starter's public types (right: docs/ARCHITECTURE.md section 16)").isEqualTo(documented);
    }

    /** The starter names only the listed API of the core and the adapters (section 16). */
    @Test
    void theStarterNamesOnlyTheListedApiOfOtherModules() {
        Map<String, Set<String>> api = ApiDocument.publicTypes(ApiDocument.repositoryRoot());
        DescribedPredicate<JavaClass> unlisted = DescribedPredicate.describe("a type of another module its API does"
                + " not list", c -> {
                    JavaClass top = c.getBaseComponentType();
                    while (top.getEnclosingClass().isPresent()) {
                        top = top.getEnclosingClass().get();
                    }
                    Set<String> listed = api.get(top.getPackageName());
                    return listed != null && !top.getPackageName().startsWith(ROOT + ".spring")
                            && !listed.contains(top.getSimpleName());
                });
        noClasses().that().resideInAPackage(ROOT + ".spring..").should().dependOnClassesThat(unlisted).check(classes);
    }
}
