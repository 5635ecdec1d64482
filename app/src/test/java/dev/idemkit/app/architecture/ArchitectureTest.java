package dev.idemkit.app.architecture;

import static com.tngtech.archunit.library.GeneralCodingRules.ACCESS_STANDARD_STREAMS;
import static com.tngtech.archunit.library.GeneralCodingRules.NO_CLASSES_SHOULD_USE_FIELD_INJECTION;
import static com.tngtech.archunit.library.GeneralCodingRules.NO_CLASSES_SHOULD_USE_JAVA_UTIL_LOGGING;
import static com.tngtech.archunit.library.GeneralCodingRules.NO_CLASSES_SHOULD_USE_JODATIME;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** docs/ARCHITECTURE.md section 1, checked over the production classes of every module. */
class ArchitectureTest {
    static final String ROOT = "dev.idemkit";

    static final ArchRule DOMAIN_USES_JDK_ONLY = IdemkitRules.domainUsesJdkOnly(ROOT);
    static final ArchRule DOMAIN_DOES_NO_IO_NOR_CLOCK_NOR_RANDOMNESS = IdemkitRules.domainDoesNoIoNorClockNorRandomness(ROOT);
    static final ArchRule PORTS_USE_DOMAIN_AND_JDK_ONLY = IdemkitRules.portsUseDomainAndJdkOnly(ROOT);
    static final ArchRule LAYERS = IdemkitRules.layers(ROOT);
    static final ArchRule ADAPTERS_ARE_INDEPENDENT = IdemkitRules.adaptersAreIndependent(ROOT);
    static final ArchRule ADAPTERS_DO_NOT_KNOW_THE_APP = IdemkitRules.adaptersDoNotKnowTheApp(ROOT);
    static final ArchRule NO_PACKAGE_CYCLES = IdemkitRules.noPackageCycles(ROOT);
    static final ArchRule EXERCISES_NAME_NO_ADAPTER_NOR_THE_APP = IdemkitRules.exercisesNameNoAdapterNorTheApp(ROOT);
    static final ArchRule EXAMPLE_SERVICE_NAMES_NO_ADAPTER = IdemkitRules.exampleServiceNamesNoAdapter(ROOT);
    static final ArchRule CONFIG_NAMES_ONLY_ADAPTER_SETTINGS = IdemkitRules.configNamesOnlyAdapterSettings(ROOT);
    static final ArchRule NOTHING_DEPENDS_ON_BENCHMARKS = IdemkitRules.nothingDependsOnBenchmarks(ROOT);
    static final ArchRule NO_PRODUCTION_TYPE_TAKES_A_FAULT_INJECTOR = IdemkitRules.noProductionTypeTakesAFaultInjector(ROOT);
    static final ArchRule ADAPTER_CLASSES_NAMED_ONLY_IN_THEIR_MODULE_AND_APP =
            IdemkitRules.adapterClassesNamedOnlyInTheirModuleAndApp(ROOT);
    static final ArchRule POSTGRES_CONFINED = IdemkitRules.technologyConfined(ROOT, "postgres",
            "org.hibernate..", "jakarta.persistence..", "org.postgresql..", "org.flywaydb..", "com.zaxxer..");
    static final ArchRule REDIS_CONFINED = IdemkitRules.technologyConfined(ROOT, "redis", "org.redisson..");
    static final ArchRule RABBIT_CONFINED = IdemkitRules.technologyConfined(ROOT, "rabbit", "com.rabbitmq..");
    static final ArchRule SQS_CONFINED = IdemkitRules.technologyConfined(ROOT, "sqs", "software.amazon..");
    static final ArchRule KAFKA_CONFINED = IdemkitRules.technologyConfined(ROOT, "kafka", "org.apache.kafka..");
    static final ArchRule LIBRARY_MODULES_DO_NOT_PRINT = noClasses().that()
            .resideInAnyPackage(ROOT + ".domain..", ROOT + ".ports..", ROOT + ".adapters..")
            .should(ACCESS_STANDARD_STREAMS)
            .because("libraries log through a logger; only the command line prints");

    private static JavaClasses production;

    @BeforeAll
    static void importEveryModule() {
        production = importProduction();
    }

    /** The production classes of every module on app's test class path (tests, test-jars and test-support left out). */
    static JavaClasses importProduction() {
        return new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(location -> !location.contains("-tests.jar"))
                // the shared test fixtures (module test-support, test scope only) are not production code
                .withImportOption(location -> !location.contains("/dev/idemkit/testsupport/"))
                .importPackages(ROOT);
    }

    @Test
    void everyModuleIsImported() {
        for (String pkg : new String[] {"domain", "ports", "adapters.postgres", "adapters.redis", "adapters.rabbit",
                "adapters.sqs", "adapters.kafka", "exercises", "app"}) {
            assertThat(production.stream().anyMatch(c -> c.getPackageName().startsWith(ROOT + "." + pkg)))
                    .as("classes of %s imported", pkg).isTrue();
        }
    }

    @Test
    void domainUsesTheJdkOnly() {
        DOMAIN_USES_JDK_ONLY.check(production);
    }

    @Test
    void domainDoesNoIoAndNeverReadsTheClockOrDrawsRandomNumbers() {
        DOMAIN_DOES_NO_IO_NOR_CLOCK_NOR_RANDOMNESS.check(production);
    }

    @Test
    void portsUseTheDomainAndTheJdkOnly() {
        PORTS_USE_DOMAIN_AND_JDK_ONLY.check(production);
    }

    @Test
    void layersOnlyPointInwards() {
        LAYERS.check(production);
    }

    @Test
    void noAdapterDependsOnAnotherAdapter() {
        ADAPTERS_ARE_INDEPENDENT.check(production);
    }

    @Test
    void noAdapterDependsOnTheApp() {
        ADAPTERS_DO_NOT_KNOW_THE_APP.check(production);
    }

    @Test
    void theExercisesNameNoAdapterNorTheApp() {
        EXERCISES_NAME_NO_ADAPTER_NOR_THE_APP.check(production);
    }

    @Test
    void theExampleServiceNamesNoAdapter() {
        EXAMPLE_SERVICE_NAMES_NO_ADAPTER.check(production);
    }

    @Test
    void theAppsConfigurationNamesOnlyTheAdaptersSettings() {
        CONFIG_NAMES_ONLY_ADAPTER_SETTINGS.check(production);
    }

    @Test
    void nothingDependsOnTheBenchmarks() {
        NOTHING_DEPENDS_ON_BENCHMARKS.check(production);
    }

    @Test
    void noProductionTypeTakesAFaultInjector() {
        NO_PRODUCTION_TYPE_TAKES_A_FAULT_INJECTOR.check(production);
    }

    @Test
    void thereAreNoPackageCycles() {
        NO_PACKAGE_CYCLES.check(production);
    }

    @Test
    void adapterClassesAreNamedOnlyInTheirModuleAndTheApp() {
        ADAPTER_CLASSES_NAMED_ONLY_IN_THEIR_MODULE_AND_APP.check(production);
    }

    @Test
    void eachTechnologyStaysInItsAdapter() {
        POSTGRES_CONFINED.check(production);
        REDIS_CONFINED.check(production);
        RABBIT_CONFINED.check(production);
        SQS_CONFINED.check(production);
        KAFKA_CONFINED.check(production);
    }

    @Test
    void librariesNeitherPrintNorUseJulNorJodaNorFieldInjection() {
        LIBRARY_MODULES_DO_NOT_PRINT.check(production);
        NO_CLASSES_SHOULD_USE_JAVA_UTIL_LOGGING.check(production);
        NO_CLASSES_SHOULD_USE_JODATIME.check(production);
        NO_CLASSES_SHOULD_USE_FIELD_INJECTION.check(production);
    }
}
